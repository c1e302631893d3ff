// Prints bytes that are not UTF-8 and fails: its trials are `error`, with the
// output quoted (invalid bytes replaced), never a worker that died of them.
#include <stdio.h>

int main(void) {
  printf("\xff\xfe not text\n");
  return 1;
}
