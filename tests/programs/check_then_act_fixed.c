// check_then_act.c fixed: the check and the use are one critical section.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct entry {
  int value;
};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry* volatile table;
static int sum;

static void* reader(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  if (table != NULL) sum += table->value;
  pthread_mutex_unlock(&lock);
  return NULL;
}

static void* remover(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  free(table);
  table = NULL;
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  table = malloc(sizeof *table);
  table->value = 7;
  pthread_t a, b;
  pthread_create(&a, NULL, reader, NULL);
  pthread_create(&b, NULL, remover, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("sum %d\n", sum);
  return 0;
}
