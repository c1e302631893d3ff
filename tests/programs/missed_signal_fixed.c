// missed_signal.c fixed: the consumer re-checks `ready` in a loop under the lock.
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int ready;

static void* consumer(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  while (!ready) pthread_cond_wait(&changed, &lock);
  pthread_mutex_unlock(&lock);
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
