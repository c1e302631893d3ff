// An uncontrolled wait: a thread spins on an atomic flag, which no pthread
// call shows to racelab. The flag is set by another thread under a mutex. The
// spinning thread must be let go (it reaches no scheduling point) so the other
// can run; the trial must not hang.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int ready;
static int value;

static void* spinner(void* arg) {
  (void)arg;
  while (!atomic_load(&ready)) {
  }
  pthread_mutex_lock(&lock);
  int v = value;
  pthread_mutex_unlock(&lock);
  return (void*)(long)v;
}

static void* setter(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  value = 42;
  pthread_mutex_unlock(&lock);
  atomic_store(&ready, 1);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  void* got = NULL;
  pthread_create(&a, NULL, spinner, NULL);
  pthread_create(&b, NULL, setter, NULL);
  pthread_join(a, &got);
  pthread_join(b, NULL);
  printf("spinner saw %ld\n", (long)got);
  return (long)got == 42 ? 0 : 1;
}
