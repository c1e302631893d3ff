// A C11 producer/consumer: a one-slot buffer under mtx_t and two cnd_t, an
// initialisation by call_once in each thread, a per-thread value in tss_t,
// results returned through thrd_join, and a final thrd_sleep and thrd_yield.
// Correct: the consumer sums 1..ITEMS, the init ran once, and each thread's
// result is its own.
#include <stdio.h>
#include <threads.h>
#include <time.h>

#define ITEMS 5
static mtx_t lock;
static cnd_t not_empty, not_full;
static int slot, full;
static once_flag once = ONCE_FLAG_INIT;
static int inits;
static tss_t mine;

static void init(void) { ++inits; }

static int producer(void* arg) {
  (void)arg;
  call_once(&once, init);
  tss_set(mine, (void*)1);
  for (int i = 1; i <= ITEMS; ++i) {
    mtx_lock(&lock);
    while (full) cnd_wait(&not_full, &lock);
    slot = i;
    full = 1;
    cnd_signal(&not_empty);
    mtx_unlock(&lock);
  }
  return (int)(long)tss_get(mine);
}

static int consumer(void* arg) {
  int* sum = arg;
  call_once(&once, init);
  tss_set(mine, (void*)2);
  for (int i = 0; i < ITEMS; ++i) {
    mtx_lock(&lock);
    while (!full) cnd_wait(&not_empty, &lock);
    *sum += slot;
    full = 0;
    cnd_broadcast(&not_full);
    mtx_unlock(&lock);
    thrd_yield();
  }
  return (int)(long)tss_get(mine);
}

int main(void) {
  mtx_init(&lock, mtx_plain);
  cnd_init(&not_empty);
  cnd_init(&not_full);
  tss_create(&mine, NULL);
  int sum = 0, rp = 0, rc = 0;
  thrd_t p, c;
  thrd_create(&p, producer, NULL);
  thrd_create(&c, consumer, &sum);
  thrd_join(p, &rp);
  thrd_join(c, &rc);
  struct timespec nap = {0, 1000000};
  thrd_sleep(&nap, NULL);
  if (sum != ITEMS * (ITEMS + 1) / 2 || inits != 1 || rp != 1 || rc != 2) {
    printf("wrong: sum %d, inits %d, results %d %d\n", sum, inits, rp, rc);
    return 1;
  }
  printf("sum %d\n", sum);
  return 0;
}
