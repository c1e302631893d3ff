// Waiting for an interval timer: setitimer(ITIMER_REAL) every 100 ms, and
// main waits in pause() for three SIGALRMs, then for a POSIX timer
// (timer_create, SIGEV_SIGNAL) with a value, in a usleep loop. Correct: all
// arrive. Before racelab kept timers on its logical time, none did.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t ticks;
static volatile sig_atomic_t value_seen;

static void on_tick(int sig) {
  (void)sig;
  ++ticks;
}

static void on_timer(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)context;
  value_seen = info->si_value.sival_int;
}

static void* helper(void* arg) {
  (void)arg;
  usleep(50000);
  return NULL;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_tick;
  sigaction(SIGALRM, &sa, NULL);
  pthread_t t;
  pthread_create(&t, NULL, helper, NULL);
  struct itimerval every = {{0, 100000}, {0, 100000}};
  setitimer(ITIMER_REAL, &every, NULL);
  while (ticks < 3) pause();
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  pthread_join(t, NULL);

  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_timer;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGUSR1, &sa, NULL);
  struct sigevent sev;
  memset(&sev, 0, sizeof(sev));
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = SIGUSR1;
  sev.sigev_value.sival_int = 42;
  timer_t timer;
  if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) {
    perror("timer_create");
    return 1;
  }
  struct itimerspec once = {{0, 0}, {0, 300 * 1000 * 1000}};
  timer_settime(timer, 0, &once, NULL);
  for (int i = 0; i < 100 && !value_seen; ++i) usleep(10000);
  timer_delete(timer);
  if (ticks < 3 || value_seen != 42) {
    printf("timers missing: %d ticks, value %d\n", (int)ticks, (int)value_seen);
    return 1;
  }
  printf("3 ticks and the timer's value %d\n", (int)value_seen);
  return 0;
}
