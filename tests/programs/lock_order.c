// Lock-order deadlock: one thread takes accounts then audit, the other audit
// then accounts. racelab reports a hang naming the cycle. Fixed: lock_order_fixed.c.
#include <pthread.h>
#include <stdio.h>

pthread_mutex_t accounts = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t audit = PTHREAD_MUTEX_INITIALIZER;
static int moved, checked;

static void* transfer(void* arg) {
  (void)arg;
  pthread_mutex_lock(&accounts);
  pthread_mutex_lock(&audit);
  ++moved;
  pthread_mutex_unlock(&audit);
  pthread_mutex_unlock(&accounts);
  return NULL;
}

static void* report(void* arg) {
  (void)arg;
  pthread_mutex_lock(&audit);
  pthread_mutex_lock(&accounts);
  ++checked;
  pthread_mutex_unlock(&accounts);
  pthread_mutex_unlock(&audit);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, transfer, NULL);
  pthread_create(&b, NULL, report, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("moved %d checked %d\n", moved, checked);
  return 0;
}
