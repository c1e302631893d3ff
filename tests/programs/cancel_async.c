// Asks for asynchronous cancellation, which racelab does not support: its
// trials are refused as bad input (exit 3), saying so, rather than run with
// a cancel that could unwind the thread inside racelab's scheduler.
#include <pthread.h>
#include <stdio.h>

static void* worker(void* arg) {
  (void)arg;
  int old;
  pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
  for (;;) {
  }
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_cancel(t);
  pthread_join(t, NULL);
  printf("cancelled\n");
  return 0;
}
