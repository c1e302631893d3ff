// Cancellation in pthread_cond_wait: a worker waits for a flag that is never
// set; main cancels it. The cleanup handler unlocks the mutex the wait took
// back, so main can lock it after the join. Correct: it always prints
// "cancelled" and exits 0. Before racelab knew pthread_cancel, every trial was
// a `hang` ("deadlock: ... blocked on pthread_cond_wait").
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cv = PTHREAD_COND_INITIALIZER;
static int ready;    // never set
static int waiting;  // the worker holds the lock in its wait loop
static int cleaned;

static void unlock_on_cancel(void* m) {
  cleaned = 1;
  pthread_mutex_unlock(m);
}

static void* worker(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  pthread_cleanup_push(unlock_on_cancel, &lock);
  waiting = 1;
  while (!ready) pthread_cond_wait(&ready_cv, &lock);
  pthread_cleanup_pop(1);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  // Cancel once the worker is in its wait (or about to be): either way the
  // cancel acts at pthread_cond_wait.
  for (;;) {
    pthread_mutex_lock(&lock);
    int w = waiting;
    pthread_mutex_unlock(&lock);
    if (w) break;
    sched_yield();
  }
  pthread_cancel(t);
  void* result = NULL;
  pthread_join(t, &result);
  if (result != PTHREAD_CANCELED || !cleaned) {
    printf("worker not cancelled (result %p, cleaned %d)\n", result, cleaned);
    return 1;
  }
  pthread_mutex_lock(&lock);  // the cleanup handler unlocked it
  pthread_mutex_unlock(&lock);
  printf("cancelled\n");
  return 0;
}
