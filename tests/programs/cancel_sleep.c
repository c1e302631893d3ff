// Cancellation in sleep(): a worker sleeps in a loop for ever; main cancels
// it. Correct: it always prints "cancelled" and exits 0. Before racelab knew
// pthread_cancel, every trial was a `hang` at the step limit (the worker's
// sleeps went on in logical time and main's join never ended).
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static volatile int naps;

static void* worker(void* arg) {
  (void)arg;
  for (;;) {
    sleep(1);
    ++naps;
  }
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  usleep(2500000);  // the worker naps a few times first
  pthread_cancel(t);
  void* result = NULL;
  pthread_join(t, &result);
  if (result != PTHREAD_CANCELED) {
    printf("worker not cancelled\n");
    return 1;
  }
  printf("cancelled after %d naps\n", naps);
  return 0;
}
