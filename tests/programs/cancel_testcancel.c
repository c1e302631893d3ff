// Cancellation at pthread_testcancel: a worker counts under a mutex in a loop
// with a cancellation point of its own; main cancels it once it has counted a
// little. Correct: the lock is free after the join (no cancellation point
// while it is held) and the count only grows. Before racelab knew
// pthread_cancel, each trial ran 80 s, past --timeout, and ended as `hang`
// ("wall-clock backstop"): the cancelled thread never told the scheduler it
// had ended.
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long count;

static void* worker(void* arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&lock);
    ++count;
    pthread_mutex_unlock(&lock);
    pthread_testcancel();
  }
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  for (;;) {
    pthread_mutex_lock(&lock);
    long seen = count;
    pthread_mutex_unlock(&lock);
    if (seen >= 3) break;
    sched_yield();
  }
  pthread_cancel(t);
  void* result = NULL;
  pthread_join(t, &result);
  if (result != PTHREAD_CANCELED) {
    printf("worker not cancelled\n");
    return 1;
  }
  if (pthread_mutex_trylock(&lock) != 0) {
    printf("the worker was cancelled holding the lock\n");
    return 1;
  }
  printf("cancelled at count %ld\n", count);
  pthread_mutex_unlock(&lock);
  return 0;
}
