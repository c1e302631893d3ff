// three_preemptions.c fixed: each thread plays its rounds in one critical section.
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 3
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int last = -1, alternations;

static void* player(void* arg) {
  int me = (int)(long)arg;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < ROUNDS; ++i) {
    if (last >= 0 && last != me) ++alternations;
    last = me;
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, player, (void*)0L);
  pthread_create(&b, NULL, player, (void*)1L);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  if (alternations == 2 * ROUNDS - 1) {
    printf("checksum broken after %d alternations\n", alternations);
    return 1;
  }
  printf("alternations %d\n", alternations);
  return 0;
}
