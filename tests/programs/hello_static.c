// A statically linked program: racelab exec must refuse it (exit 3), since the
// dynamic linker never runs and LD_PRELOAD cannot reach its calls.
#include <stdio.h>

int main(void) {
  printf("hello\n");
  return 0;
}
