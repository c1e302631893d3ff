// eight_threads.c fixed: each stage registers in its own slot, so no order can
// corrupt the table.
#include <pthread.h>
#include <stdio.h>

#define N 8
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int slot[N];

static void* stage(void* arg) {
  int me = (int)(long)arg;
  pthread_mutex_lock(&lock);
  slot[me] = 1;
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  pthread_t t[N];
  for (long i = 0; i < N; ++i) pthread_create(&t[i], NULL, stage, (void*)i);
  for (int i = 0; i < N; ++i) pthread_join(t[i], NULL);
  for (int i = 0; i < N; ++i) {
    if (!slot[i]) {
      printf("table corrupted: stage %d missing\n", i);
      return 1;
    }
  }
  printf("all %d stages registered\n", N);
  return 0;
}
