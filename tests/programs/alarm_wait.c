// Waiting for alarm(): main sets alarm(1), a worker counts meanwhile, and
// main sleeps in 10 ms steps until the SIGALRM handler has run. Correct:
// the alarm fires within its 2 s of polling. Before racelab kept timers on
// its logical time, every trial ended with "no alarm": sleeps take no real
// time under control, so the real alarm never came.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t fired;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int work;

static void on_alarm(int sig) {
  (void)sig;
  fired = 1;
}

static void* worker(void* arg) {
  (void)arg;
  for (int i = 0; i < 20; ++i) {
    pthread_mutex_lock(&lock);
    ++work;
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  alarm(1);
  const struct timespec step = {0, 10 * 1000 * 1000};
  for (int i = 0; i < 200 && !fired; ++i) nanosleep(&step, NULL);
  pthread_join(t, NULL);
  if (!fired) {
    printf("no alarm\n");
    return 1;
  }
  printf("alarm after the worker did %d\n", work);
  return 0;
}
