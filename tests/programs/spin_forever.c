// The main thread holds a lock while it waits, spinning, for a worker that
// needs that very lock before it can say it is ready: the program never ends.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int ready;

static void* worker(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  atomic_store(&ready, 1);
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_mutex_lock(&lock);
  pthread_create(&t, NULL, worker, NULL);
  while (!atomic_load(&ready)) {
  }
  pthread_mutex_unlock(&lock);
  pthread_join(t, NULL);
  printf("ready\n");
  return 0;
}
