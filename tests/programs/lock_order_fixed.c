// lock_order.c fixed: both threads take accounts before audit.
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
  pthread_mutex_lock(&accounts);
  pthread_mutex_lock(&audit);
  ++checked;
  pthread_mutex_unlock(&audit);
  pthread_mutex_unlock(&accounts);
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
