// marked_point.c fixed: the read and the write are one critical section. The
// point stays where it was (inside the lock now): a thread paused there holds
// the lock, so no other increment can come between.
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#pragma weak racelab_point
void racelab_point(const char* name);

#define ROUNDS 3
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int counter;
static int use_point = 1;

static void* add(void* arg) {
  (void)arg;
  for (int i = 0; i < ROUNDS; ++i) {
    pthread_mutex_lock(&lock);
    int seen = counter;
    if (use_point && racelab_point) racelab_point("counter.read");
    counter = seen + 1;
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

int main(int argc, char** argv) {
  use_point = !(argc > 1 && strcmp(argv[1], "--no-point") == 0);
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
