// A lost update that only a marked point exposes: two threads increment a
// plain counter with no lock at all, but between the read and the write there
// is no pthread call, so under racelab's serialising scheduler the threads
// never interleave there -- unless the program marks the place with
// racelab_point() (racelab/racelab.h). The program links nothing of racelab:
// it refers to racelab_point weakly, which racelab exec's preload library
// defines; run plainly, the symbol is null and the call is skipped.
// `--no-point` skips the point: then the bug is out of reach.
// Expected: counter == 2 * ROUNDS. Fixed: marked_point_fixed.c.
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#pragma weak racelab_point
void racelab_point(const char* name);

#define ROUNDS 3
static volatile int counter;
static int use_point = 1;

static void* add(void* arg) {
  (void)arg;
  for (int i = 0; i < ROUNDS; ++i) {
    int seen = counter;
    if (use_point && racelab_point) racelab_point("counter.read");  // another thread may run here
    counter = seen + 1;
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
