// (fixed) Three workers drain a shared work queue, then meet at a barrier to
// end the phase. A worker that got no item at all (the others drained the
// queue before it started) skips straight to "done" -- and so never reaches
// the barrier, where the others wait for it forever.
// This is the fix: a worker with nothing to do still meets the others.
#include <pthread.h>
#include <stdio.h>

#define WORKERS 3

static pthread_barrier_t phase_end;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static int queue_items = 3;
static int processed;

static int take_item(void) {
  pthread_mutex_lock(&queue_lock);
  int got = queue_items > 0;
  if (got) --queue_items;
  pthread_mutex_unlock(&queue_lock);
  return got;
}

static void* worker(void* arg) {
  (void)arg;
  int mine = 0;
  while (take_item()) ++mine;
  pthread_mutex_lock(&queue_lock);
  processed += mine;
  pthread_mutex_unlock(&queue_lock);
  pthread_barrier_wait(&phase_end);
  return NULL;
}

int main(void) {
  pthread_t t[WORKERS];
  pthread_barrier_init(&phase_end, NULL, WORKERS);
  for (int i = 0; i < WORKERS; ++i) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < WORKERS; ++i) pthread_join(t[i], NULL);
  printf("processed %d\n", processed);
  return 0;
}
