// Two threads record page hits: the page table under a lock, the total in a
// plain counter outside it. `total++` has no pthread call between its read
// and its write, so only memory-access points (CMakeLists.txt) let racelab
// switch threads there.  Expected: total == 2 * HITS.
#include <pthread.h>
#include <stdio.h>

#define HITS 3

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static int pages[4];
static int total;

static void* visit(void* arg) {
  int page = *(int*)arg;
  for (int i = 0; i < HITS; ++i) {
    pthread_mutex_lock(&table_lock);
    pages[page]++;
    pthread_mutex_unlock(&table_lock);
    total++;
  }
  return NULL;
}

int main(void) {
  int first = 0, second = 1;
  pthread_t a, b;
  pthread_create(&a, NULL, visit, &first);
  pthread_create(&b, NULL, visit, &second);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  if (total != 2 * HITS) {
    printf("lost update: total %d, expected %d\n", total, 2 * HITS);
    return 1;
  }
  printf("total %d\n", total);
  return 0;
}
