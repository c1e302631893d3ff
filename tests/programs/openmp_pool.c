// An OpenMP parallel loop: libgomp's pool threads are created with
// pthread_create (so they are managed) and wait for work in futexes racelab
// cannot see. They must be let go, not hang the trial.
#include <omp.h>
#include <stdio.h>

int main(void) {
  long sum = 0;
#pragma omp parallel for num_threads(4) reduction(+ : sum)
  for (int i = 0; i < 1000; ++i) sum += i;
  printf("sum %ld\n", sum);
  return sum == 499500 ? 0 : 1;
}
