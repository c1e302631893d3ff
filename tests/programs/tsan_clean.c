// A correct program built with ThreadSanitizer: every shared write is ordered
// by the program's own synchronisation, so TSan reports nothing natively, in
// any interleaving. Four workers each add to a total under a mutex, meet at a
// barrier, then read what all of them wrote before it; a semaphore and a
// condition variable hand a result back to main. Under racelab no trial may
// be data_race: racelab's own scheduling is not the program's
// synchronisation, and neither hiding a race nor inventing one is allowed.
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

enum { kWorkers = 4 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t phase;
static sem_t results_ready;
static long total;
static long slots[kWorkers];  // written before the barrier, read by all after it
static long sums[kWorkers];
static int finished;

static void* worker(void* arg) {
  const long me = (long)arg;
  slots[me] = me + 1;
  pthread_mutex_lock(&lock);
  total += me + 1;
  pthread_mutex_unlock(&lock);
  pthread_barrier_wait(&phase);
  long sum = 0;
  for (int i = 0; i < kWorkers; ++i) sum += slots[i];
  sums[me] = sum;
  sem_post(&results_ready);
  pthread_mutex_lock(&lock);
  ++finished;
  pthread_cond_signal(&done_cv);
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  pthread_t threads[kWorkers];
  pthread_barrier_init(&phase, NULL, kWorkers);
  sem_init(&results_ready, 0, 0);
  for (long i = 0; i < kWorkers; ++i) pthread_create(&threads[i], NULL, worker, (void*)i);
  for (int i = 0; i < kWorkers; ++i) sem_wait(&results_ready);
  pthread_mutex_lock(&lock);
  while (finished < kWorkers) pthread_cond_wait(&done_cv, &lock);
  pthread_mutex_unlock(&lock);
  long all = 0;
  for (int i = 0; i < kWorkers; ++i) all += sums[i];
  for (int i = 0; i < kWorkers; ++i) pthread_join(threads[i], NULL);
  printf("total %ld, sums %ld\n", total, all);
  return total == 10 && all == 40 ? 0 : 1;
}
