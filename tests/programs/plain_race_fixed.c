// plain_race.c, fixed: the served count is kept under the queue's lock, in
// the same critical section that hands out the job. Built with memory-access
// points like the buggy one, it holds under every schedule.
// Expected: served == JOBS.
#include <pthread.h>
#include <stdio.h>

#define JOBS 6

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static int next_job;
static int served;  // guarded by queue_lock

static void* worker(void* arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&queue_lock);
    int job = next_job < JOBS ? next_job++ : -1;
    if (job >= 0) served++;
    pthread_mutex_unlock(&queue_lock);
    if (job < 0) return NULL;
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
