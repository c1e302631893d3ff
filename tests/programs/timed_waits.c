/* Timed waits, each used the way a correct program uses it: a worker does some
 * locked work, then provides what the main thread waits for; the main thread
 * waits with a 30 s deadline and treats a timeout as the failure it would be.
 *
 *   timed_waits cond|mutex|rdlock|wrlock|sem|join|tryjoin   every wait must succeed
 *   timed_waits expire                                      nobody provides: each wait must time out
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t sem;
static int ready = 0, work = 0;
static const char* mode;

static struct timespec in_seconds(int s) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += s;
  return t;
}

static void fail(const char* what, int rc) {
  fprintf(stderr, "%s: %s\n", what, strerror(rc));
  exit(1);
}

static void* worker(void* arg) {
  (void)arg;
  for (int i = 0; i < 5; ++i) {  /* some locked work first */
    pthread_mutex_lock(&m);
    ++work;
    pthread_mutex_unlock(&m);
  }
  if (strcmp(mode, "cond") == 0) {
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
  } else if (strcmp(mode, "sem") == 0) {
    sem_post(&sem);
  }
  return NULL;
}

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;

static void* holder(void* arg) {  /* holds `held` through some locked work, then lets go */
  (void)arg;
  pthread_mutex_lock(&held);
  for (int i = 0; i < 5; ++i) {
    pthread_mutex_lock(&m);
    ++work;
    pthread_mutex_unlock(&m);
  }
  pthread_mutex_unlock(&held);
  return NULL;
}

int main(int argc, char** argv) {
  mode = argc > 1 ? argv[1] : "cond";
  sem_init(&sem, 0, 0);
  int expire = strcmp(mode, "expire") == 0;
  pthread_t t;
  struct timespec d;
  int rc;
  if (expire) {
    d = in_seconds(1);
    pthread_mutex_lock(&m);
    rc = pthread_cond_timedwait(&c, &m, &d);
    pthread_mutex_unlock(&m);
    if (rc != ETIMEDOUT) fail("cond_timedwait with nobody to signal", rc);
    d = in_seconds(1);
    if (sem_timedwait(&sem, &d) == 0 || errno != ETIMEDOUT) fail("sem_timedwait with nobody to post", errno);
    printf("expired as they should\n");
    return 0;
  }
  if (strcmp(mode, "mutex") == 0) {
    pthread_create(&t, NULL, holder, NULL);
    d = in_seconds(30);
    if ((rc = pthread_mutex_timedlock(&held, &d)) != 0) fail("mutex_timedlock", rc);
    pthread_mutex_unlock(&held);
    pthread_join(t, NULL);
  } else if (strcmp(mode, "rdlock") == 0 || strcmp(mode, "wrlock") == 0) {
    pthread_rwlock_wrlock(&rw);
    pthread_create(&t, NULL, worker, NULL);
    pthread_rwlock_unlock(&rw);
    d = in_seconds(30);
    rc = mode[0] == 'r' ? pthread_rwlock_timedrdlock(&rw, &d) : pthread_rwlock_timedwrlock(&rw, &d);
    if (rc != 0) fail("rwlock_timed*lock", rc);
    pthread_rwlock_unlock(&rw);
    pthread_join(t, NULL);
  } else if (strcmp(mode, "join") == 0 || strcmp(mode, "tryjoin") == 0) {
    pthread_create(&t, NULL, worker, NULL);
    if (mode[0] == 'j') {
      d = in_seconds(30);
      if ((rc = pthread_timedjoin_np(t, NULL, &d)) != 0) fail("timedjoin_np", rc);
    } else {
      while ((rc = pthread_tryjoin_np(t, NULL)) == EBUSY) usleep(1000);
      if (rc != 0) fail("tryjoin_np", rc);
    }
  } else {
    pthread_create(&t, NULL, worker, NULL);
    d = in_seconds(30);
    if (strcmp(mode, "sem") == 0) {
      if (sem_timedwait(&sem, &d) != 0) fail("sem_timedwait", errno);
    } else {
      pthread_mutex_lock(&m);
      while (!ready) {
        rc = pthread_cond_timedwait(&c, &m, &d);
        if (rc == ETIMEDOUT) fail("cond_timedwait", rc);
      }
      pthread_mutex_unlock(&m);
    }
    pthread_join(t, NULL);
  }
  if (work != 5) {
    fprintf(stderr, "work %d\n", work);
    return 1;
  }
  printf("%s: waited and got it\n", mode);
  return 0;
}
