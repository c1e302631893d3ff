// Lost update: each thread reads the counter in one critical section and
// writes it back in another, so an increment made in between is lost.
// Expected: counter == 2 * ROUNDS. Fixed: lost_update_fixed.c.
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 2
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void* add(void* arg) {
  (void)arg;
  for (int i = 0; i < ROUNDS; ++i) {
    pthread_mutex_lock(&lock);
    int seen = counter;
    pthread_mutex_unlock(&lock);
    pthread_mutex_lock(&lock);  // the read above is stale if another thread got in here
    counter = seen + 1;
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
