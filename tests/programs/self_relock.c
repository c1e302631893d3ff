// A cache with a lock, and a helper that refills it. The helper takes the
// lock itself -- it was written to be called from outside -- but lookup()
// calls it with the lock held when it finds the cache emptied by another
// thread's invalidate(). The thread then waits for a lock it holds itself.
// Fixed: self_relock_fixed.c has a refill that expects the lock held.
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static int cached_value = 7;
static int cache_valid = 1;

static void refill(void) {
  pthread_mutex_lock(&cache_lock);
  cached_value = 7;
  cache_valid = 1;
  pthread_mutex_unlock(&cache_lock);
}

static int lookup(void) {
  pthread_mutex_lock(&cache_lock);
  if (!cache_valid) refill();  // called with cache_lock held
  int v = cached_value;
  pthread_mutex_unlock(&cache_lock);
  return v;
}

static void* reader(void* arg) {
  (void)arg;
  long sum = 0;
  for (int i = 0; i < 2; ++i) sum += lookup();
  return (void*)sum;
}

static void* invalidator(void* arg) {
  (void)arg;
  pthread_mutex_lock(&cache_lock);
  cache_valid = 0;
  pthread_mutex_unlock(&cache_lock);
  return NULL;
}

int main(void) {
  pthread_t r, w;
  void* sum;
  pthread_create(&r, NULL, reader, NULL);
  pthread_create(&w, NULL, invalidator, NULL);
  pthread_join(r, &sum);
  pthread_join(w, NULL);
  printf("sum %ld\n", (long)sum);
  return 0;
}
