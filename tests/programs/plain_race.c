// A data race on a plain variable that only memory-access points expose. Two
// workers take jobs from a queue under a lock, and count what they served in
// a plain int outside it. `served++` reads and writes with no pthread call in
// between, so racelab's pthread-level points (the lock and unlock around it)
// never split it: under a serialising scheduler the plainly built program
// always counts right. Built with memory-access points (racelab-cc, or
// racelab_instrument_memory() as here) the read and the write are points
// too, and a switch between them loses an update.
// Expected: served == JOBS. Fixed: plain_race_fixed.c.
#include <pthread.h>
#include <stdio.h>

#define JOBS 6

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static int next_job;
static int served;  // the race: written by both workers, no lock

static void* worker(void* arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&queue_lock);
    int job = next_job < JOBS ? next_job++ : -1;
    pthread_mutex_unlock(&queue_lock);
    if (job < 0) return NULL;
    served++;
  }
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, worker, NULL);
  pthread_create(&b, NULL, worker, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  if (served != JOBS) {
    printf("lost update: served %d of %d jobs\n", served, JOBS);
    return 1;
  }
  printf("served %d jobs\n", served);
  return 0;
}
