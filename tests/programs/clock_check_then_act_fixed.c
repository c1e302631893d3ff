// (fixed) A ticket counter whose sellers log each sale with a timestamp, as service
// code does, and refresh a statistics snapshot (under a second lock) when the
// clock says the last refresh is old. The sale itself is a check-then-act: a
// seller checks that a ticket is left under the lock, lets go of it to log,
// and takes the ticket afterwards -- two sellers can both see the last ticket.
// Whether a seller takes the statistics lock depends on the clock, so the
// interleavings, and a schedule's steps, depend on the time read: a schedule
// replays only if the clock reads the same. This is the fix: the check and
// the sale are one critical section.
#include <pthread.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

static pthread_mutex_t tickets_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static int tickets = 1;
static int sold;
static long last_refresh_us;
static long refreshes;

static long now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static void log_sale(int seller) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  char line[96];
  snprintf(line, sizeof line, "[%ld.%06ld] seller %d: selling", (long)tv.tv_sec, (long)tv.tv_usec, seller);
  (void)line;  // a real service writes this to its log
  if (now_us() - last_refresh_us > 15) {  // the snapshot is old: refresh it
    pthread_mutex_lock(&stats_lock);
    last_refresh_us = now_us();
    ++refreshes;
    pthread_mutex_unlock(&stats_lock);
  }
}

static void* seller(void* arg) {
  int id = (int)(long)arg;
  pthread_mutex_lock(&tickets_lock);
  int mine = tickets > 0;
  if (mine) {
    --tickets;
    ++sold;
  }
  pthread_mutex_unlock(&tickets_lock);
  if (mine) log_sale(id);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  last_refresh_us = now_us();
  pthread_create(&a, NULL, seller, (void*)1L);
  pthread_create(&b, NULL, seller, (void*)2L);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  if (tickets < 0) {
    printf("oversold: %d tickets sold, %d left (time %ld)\n", sold, tickets, (long)time(NULL));
    return 1;
  }
  printf("sold %d, %ld refreshes\n", sold, refreshes);
  return 0;
}
