// A program that does all its work in a constructor and ends before main:
// racelab exec must say it never reached main (exit 3).
#include <stdio.h>
#include <unistd.h>

__attribute__((constructor)) static void everything_before_main(void) {
  printf("done before main\n");
  fflush(stdout);
  _exit(0);
}

int main(void) { return 0; }
