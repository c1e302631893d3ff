// A server that starts a short-lived thread per request, one after another:
// 1,100 threads in all, more than racelab schedules (1,024 besides main).
#include <pthread.h>
#include <stdio.h>

static void* request(void* arg) { return arg; }

int main(void) {
  long served = 0;
  for (long i = 0; i < 1100; ++i) {
    pthread_t t;
    void* r;
    pthread_create(&t, NULL, request, (void*)1L);
    pthread_join(t, &r);
    served += (long)r;
  }
  printf("served %ld\n", served);
  return 0;
}
