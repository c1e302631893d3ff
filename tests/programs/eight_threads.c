// A bug that needs one ordering among eight threads: eight stages register in
// a shared table, and the table is corrupted only when the last stage started
// registers before every other stage. Fixed: eight_threads_fixed.c.
#include <pthread.h>
#include <stdio.h>

#define N 8
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int order[N], registered;

static void* stage(void* arg) {
  int me = (int)(long)arg;
  pthread_mutex_lock(&lock);
  order[registered++] = me;
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  pthread_t t[N];
  for (long i = 0; i < N; ++i) pthread_create(&t[i], NULL, stage, (void*)i);
  for (int i = 0; i < N; ++i) pthread_join(t[i], NULL);
  if (order[0] == N - 1) {
    printf("table corrupted: stage %d registered first\n", N - 1);
    return 1;
  }
  printf("first stage %d\n", order[0]);
  return 0;
}
