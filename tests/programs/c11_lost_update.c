// Lost update in C11 threads: each thread reads the counter under mtx_lock
// and writes it back under a second acquisition, so an increment made in
// between is lost. Expected: counter == 2 * ROUNDS. Fixed:
// c11_lost_update_fixed.c. Before racelab interposed <threads.h> (glibc's
// mtx_lock calls its pthread mutex inside the C library, out of the preload's
// reach), `dpor:2` called one schedule a complete search and found nothing.
#include <stdio.h>
#include <threads.h>

#define ROUNDS 2
static mtx_t lock;
static int counter;

static int add(void* arg) {
  (void)arg;
  for (int i = 0; i < ROUNDS; ++i) {
    mtx_lock(&lock);
    int seen = counter;
    mtx_unlock(&lock);
    mtx_lock(&lock);  // the read above is stale if another thread got in here
    counter = seen + 1;
    mtx_unlock(&lock);
  }
  return 0;
}

int main(void) {
  mtx_init(&lock, mtx_plain);
  thrd_t a, b;
  thrd_create(&a, add, NULL);
  thrd_create(&b, add, NULL);
  thrd_join(a, NULL);
  thrd_join(b, NULL);
  mtx_destroy(&lock);
  if (counter != 2 * ROUNDS) {
    printf("lost update: counter is %d, expected %d\n", counter, 2 * ROUNDS);
    return 1;
  }
  printf("counter %d\n", counter);
  return 0;
}
