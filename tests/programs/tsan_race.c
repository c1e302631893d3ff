// A data race ThreadSanitizer reports in every run: two threads add to a
// plain counter with no lock. Built with -fsanitize=thread (gcc's libtsan, not
// racelab-cc's runtime), its report on stderr makes the trial data_race under
// racelab exec, whatever the interleaving; TSan's own exit status (66) must
// not turn it into a mere error.
#include <pthread.h>
#include <stdio.h>

static int counter;

static void* add(void* arg) {
  (void)arg;
  for (int i = 0; i < 1000000; ++i) counter++;
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, add, NULL);
  pthread_create(&b, NULL, add, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("counter %d\n", counter);
  return 0;
}
