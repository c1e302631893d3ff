// A bug that needs three preemptions: two threads hand a token back and forth
// in three rounds each; a checksum goes wrong only when they alternate
// strictly (A B A B A B), which takes three preemptions -- fewer than three
// and one thread runs two rounds in a row. Fixed: three_preemptions_fixed.c.
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 3
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int last = -1, alternations;

static void* player(void* arg) {
  int me = (int)(long)arg;
  for (int i = 0; i < ROUNDS; ++i) {
    pthread_mutex_lock(&lock);
    if (last >= 0 && last != me) ++alternations;
    last = me;
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, player, (void*)0L);
  pthread_create(&b, NULL, player, (void*)1L);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  // The "bug": a state machine that assumed no thread ever got the token
  // back more than twice in a row from the other.
  if (alternations == 2 * ROUNDS - 1) {
    printf("checksum broken after %d alternations\n", alternations);
    return 1;
  }
  printf("alternations %d\n", alternations);
  return 0;
}
