// Check-then-act: a reader checks that an entry exists, lets go of the lock,
// then uses it; a remover frees it in between. The use dereferences NULL: a crash.
// Fixed: check_then_act_fixed.c.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct entry {
  int value;
};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry* volatile table;
static int sum;

static void* reader(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  int present = table != NULL;
  pthread_mutex_unlock(&lock);
  if (present) {
    pthread_mutex_lock(&lock);
    sum += table->value;  // the entry may be gone by now
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

static void* remover(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  free(table);
  table = NULL;
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  table = malloc(sizeof *table);
  table->value = 7;
  pthread_t a, b;
  pthread_create(&a, NULL, reader, NULL);
  pthread_create(&b, NULL, remover, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("sum %d\n", sum);
  return 0;
}
