/* racelab_exec_target: the program `racelab bench` runs under `racelab exec`
 * (section exec, cli/bench/exec.cpp). Two threads take one mutex in turn.
 *
 *   racelab_exec_target PAIRS [OUT]
 *
 * Each thread locks and unlocks the mutex PAIRS times. With OUT, the program
 * writes the nanoseconds per lock/unlock pair it measured itself (the
 * threads' loops only, not start-up), so the same figure comes from a native
 * run, a run with the preload library loaded but not scheduling, and a
 * controlled trial. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter, pairs;

static void* body(void* arg) {
  (void)arg;
  for (long i = 0; i < pairs; ++i) {
    pthread_mutex_lock(&lock);
    ++counter;
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  pairs = argc > 1 ? atol(argv[1]) : 10;
  double t0 = now_ns();
  pthread_t a, b;
  pthread_create(&a, NULL, body, NULL);
  pthread_create(&b, NULL, body, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  double ns = now_ns() - t0;
  if (counter != 2 * pairs) return 1;
  if (argc > 2) {
    FILE* f = fopen(argv[2], "w");
    if (f == NULL) return 2;
    fprintf(f, "%.3f\n", ns / (double)(2 * pairs));
    fclose(f);
  }
  return 0;
}
