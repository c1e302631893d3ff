// Threads that wait and wake with the futex system call directly (as
// std::atomic::wait and std::latch do), which racelab does not schedule:
// correct, but a search over the steps racelab sees is no proof for it, so
// `dpor` must not call itself complete, and racelab must say why.
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int flag;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int shared;

static void* waiter(void* arg) {
  (void)arg;
  while (atomic_load(&flag) == 0) syscall(SYS_futex, &flag, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  pthread_mutex_lock(&lock);
  ++shared;
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, waiter, NULL);
  pthread_mutex_lock(&lock);
  ++shared;
  pthread_mutex_unlock(&lock);
  atomic_store(&flag, 1);
  syscall(SYS_futex, &flag, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  pthread_join(t, NULL);
  printf("shared %d\n", shared);
  return shared == 2 ? 0 : 1;
}
