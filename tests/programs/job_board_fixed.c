// A job board (fixed): the main thread posts one job, two workers poll the board for
// it -- one with sched_yield, one with usleep, as real pollers do -- and the
// main thread retires the job once a worker reports it done. A worker reads
// the job's pointer in one critical section and its data in another, so the
// main thread can retire the job (clearing its data) in between: the worker
// then dereferences NULL. This is the fix: the pointer and its data are read
// under one lock, and a retired job is skipped.
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

struct job {
  const int* data;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct job the_job;
static struct job* board;  // the posted job, or NULL
static int done_count;
static int closed;
static const int payload = 21;

static int work_on(const int* data) { return data == NULL ? 0 : *data * 2; }

static void* worker(void* arg) {
  const int use_sleep = *(const int*)arg;
  for (;;) {
    pthread_mutex_lock(&lock);
    struct job* j = board;
    const int* data = j != NULL ? j->data : NULL;  // read with the pointer, under the same lock
    int stop = closed;
    pthread_mutex_unlock(&lock);
    if (stop) return NULL;
    if (j == NULL) {
      if (use_sleep)
        usleep(100);
      else
        sched_yield();
      continue;
    }
    int result = work_on(data);
    pthread_mutex_lock(&lock);
    if (result == 2 * payload) ++done_count;
    pthread_mutex_unlock(&lock);
  }
}

int main(void) {
  static const int yield_poller = 0, sleep_poller = 1;
  pthread_t a, b;
  pthread_create(&a, NULL, worker, (void*)&yield_poller);
  pthread_create(&b, NULL, worker, (void*)&sleep_poller);
  pthread_mutex_lock(&lock);
  the_job.data = &payload;
  board = &the_job;
  pthread_mutex_unlock(&lock);
  for (;;) {  // wait until some worker has done the job
    pthread_mutex_lock(&lock);
    int n = done_count;
    pthread_mutex_unlock(&lock);
    if (n > 0) break;
    usleep(1000);
  }
  pthread_mutex_lock(&lock);  // retire the job and close the board
  board = NULL;
  the_job.data = NULL;
  closed = 1;
  pthread_mutex_unlock(&lock);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("job done %d time(s)\n", done_count);
  return 0;
}
