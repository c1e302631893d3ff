// Two loaders fill a shared table. A loader that finds the table already
// full (the other one was quicker) returns early -- from inside its critical
// section, forgetting to unlock. The main thread then waits for the table's
// lock, which a thread that has exited holds. Fixed: exited_holder_fixed.c
// unlocks on every path.
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static int table_rows;

static void* loader(void* arg) {
  (void)arg;
  pthread_mutex_lock(&table_lock);
  if (table_rows >= 1) return NULL;  // already loaded (and still locked)
  table_rows += 1;
  pthread_mutex_unlock(&table_lock);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, loader, NULL);
  pthread_create(&b, NULL, loader, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  pthread_mutex_lock(&table_lock);
  printf("rows %d\n", table_rows);
  pthread_mutex_unlock(&table_lock);
  return 0;
}
