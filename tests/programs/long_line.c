// Prints one line of 200,000 characters ("abab...") and succeeds: matching
// --fail-on-output along it must neither crash (std::regex matches by
// recursion) nor find what is not there.
#include <stdio.h>

int main(void) {
  for (int i = 0; i < 200000; ++i) putchar('a' + i % 2);
  putchar('\n');
  return 0;
}
