// Missed condition signal: the consumer checks `ready` under the lock, lets go
// of it, and only then waits. A producer that sets `ready` and signals in
// between is missed, and the consumer waits forever: a hang.
// Fixed: missed_signal_fixed.c.
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int ready;

static void* consumer(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  int r = ready;
  pthread_mutex_unlock(&lock);
  if (!r) {
    pthread_mutex_lock(&lock);
    pthread_cond_wait(&changed, &lock);  // the signal may have come already
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

static void* producer(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  ready = 1;
  pthread_cond_signal(&changed);
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  pthread_t c, p;
  pthread_create(&c, NULL, consumer, NULL);
  pthread_create(&p, NULL, producer, NULL);
  pthread_join(c, NULL);
  pthread_join(p, NULL);
  printf("consumed\n");
  return 0;
}
