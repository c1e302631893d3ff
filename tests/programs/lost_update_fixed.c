// lost_update.c fixed: the read and the write are one critical section.
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 2
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void* add(void* arg) {
  (void)arg;
  for (int i = 0; i < ROUNDS; ++i) {
    pthread_mutex_lock(&lock);
    counter = counter + 1;
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, add, NULL);
  pthread_create(&b, NULL, add, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  if (counter != 2 * ROUNDS) {
    printf("lost update: counter is %d, expected %d\n", counter, 2 * ROUNDS);
    return 1;
  }
  printf("counter %d\n", counter);
  return 0;
}
