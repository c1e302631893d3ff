// Reads one line from stdin and checks it; two threads share the answer under
// a lock. Correct with `--stdin` a file holding "ready"; with the default
// stdin (/dev/null) it sees end-of-file and exits 2.
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char line[64];
static int seen;

static void* reader(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  if (strcmp(line, "ready\n") == 0) ++seen;
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  if (fgets(line, sizeof(line), stdin) == NULL) {
    printf("end of file on stdin\n");
    return 2;
  }
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  pthread_join(t, NULL);
  if (!seen) {
    printf("read '%s'\n", line);
    return 1;
  }
  printf("read ready\n");
  return 0;
}
