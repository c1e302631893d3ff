// order_violation.c fixed: the configuration exists before the worker starts.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct config {
  int threads;
};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct config* volatile config;
static int seen;

static void* worker(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  seen = config->threads;
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  config = malloc(sizeof *config);
  config->threads = 4;
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  printf("worker saw %d\n", seen);
  return 0;
}
