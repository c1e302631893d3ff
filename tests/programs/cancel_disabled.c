// A cancel that arrives while the target has cancellation disabled waits for
// it: the worker's sleep(2) runs its full time (a disabled thread is not woken
// by the cancel), and the cancel acts at the first cancellation point after
// it enables cancellation again. Correct: it always prints "cancelled after
// the nap" and exits 0.
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int slept_s, stage;

static void* worker(void* arg) {
  (void)arg;
  int old;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  sleep(2);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  slept_s = (int)(t1.tv_sec - t0.tv_sec);
  stage = 1;
  pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
  pthread_testcancel();
  stage = 2;  // never: the cancel acts above
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  usleep(500000);
  pthread_cancel(t);
  void* result = NULL;
  pthread_join(t, &result);
  if (result != PTHREAD_CANCELED || stage != 1 || slept_s < 2) {
    printf("wrong: cancelled %d, stage %d, slept %d s\n", result == PTHREAD_CANCELED, stage, slept_s);
    return 1;
  }
  printf("cancelled after the nap\n");
  return 0;
}
