// (fixed) A hundred request handlers each add their count to a shared total the
// way a hurried port of single-threaded code does: read the total under
// the lock, add outside it, write it back under the lock. Any two handlers
// that interleave there lose an update. This is the fix: the read, the add
// and the write are one critical section.
#include <pthread.h>
#include <stdio.h>

#define HANDLERS 100

static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void* handle(void* arg) {
  long count = (long)arg;
  pthread_mutex_lock(&total_lock);
  total += count;
  pthread_mutex_unlock(&total_lock);
  return NULL;
}

int main(void) {
  pthread_t handlers[HANDLERS];
  long expected = 0;
  for (long i = 0; i < HANDLERS; ++i) {
    expected += i + 1;
    pthread_create(&handlers[i], NULL, handle, (void*)(i + 1));
  }
  for (int i = 0; i < HANDLERS; ++i) pthread_join(handlers[i], NULL);
  if (total != expected) {
    printf("lost update: total %ld, expected %ld\n", total, expected);
    return 1;
  }
  printf("total %ld\n", total);
  return 0;
}
