// c11_lost_update.c fixed: the read and the write in one critical section.
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
