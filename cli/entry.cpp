// main() of the racelab binary, and of racelab::main for a user's binary: all
// of it is cli_main (cli/main.cpp); what differs between binaries is which
// workloads their other objects register.
#include "racelab/cli.h"

int main(int argc, char** argv) { return racelab::cli_main(argc, argv); }
