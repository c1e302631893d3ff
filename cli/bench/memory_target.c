/* racelab_memory_target and racelab_memory_target_plain: the program `racelab
 * bench` (section memory, cli/bench/memory.cpp) runs with memory-access
 * points (racelab_instrument_memory) and as its plain build, from this one
 * source.
 *
 *   racelab_memory_target[_plain] ITERS [OUT]
 *
 * Two threads, ITERS iterations each, every iteration a mix: a sum over a
 * 16-element array on the stack and a thread-local counter (accesses the
 * runtime filters out), then, under one lock, a read and a write of a shared
 * array slot (two memory-access points when instrumented). With OUT the
 * program writes the nanoseconds per iteration it measured around its
 * threads' loops, so start-up and the supervisor are not in the figure. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long shared[16];
static long iters;
static __thread long mine;

/* Not inlined, so the array is reached through a pointer the compiler
 * cannot prove local: its accesses are instrumented, and filtered. */
__attribute__((noinline)) static long sum(volatile long* v, int n) {
  long s = 0;
  for (int i = 0; i < n; ++i) s += v[i];
  return s;
}

static void* body(void* arg) {
  long seed = (long)(size_t)arg;
  const long n = iters;
  for (long i = 0; i < n; ++i) {
    volatile long local[16];
    for (int k = 0; k < 16; ++k) local[k] = seed + i + k;
    mine += sum(local, 16);
    pthread_mutex_lock(&lock);
    shared[i & 15] += 1;
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
  iters = argc > 1 ? atol(argv[1]) : 10;
  double t0 = now_ns();
  pthread_t a, b;
  pthread_create(&a, NULL, body, (void*)1);
  pthread_create(&b, NULL, body, (void*)2);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  double ns = now_ns() - t0;
  long total = 0;
  for (int k = 0; k < 16; ++k) total += shared[k];
  if (total != 2 * iters) return 1;
  if (argc > 2) {
    FILE* f = fopen(argv[2], "w");
    if (f == NULL) return 2;
    fprintf(f, "%.3f\n", ns / (double)(2 * iters));
    fclose(f);
  }
  return 0;
}
