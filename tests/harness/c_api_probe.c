/* The C side of c_api_test.cpp: compiled as C99 with -pedantic-errors, so it
 * also checks that racelab/racelab.h is plain C. */
#include <string.h>

#include "racelab/racelab.h"
#include "c_api_probe.h"

static long g_balance;

void c_probe_reset(void) { g_balance = 0; }

long c_probe_balance(void) { return g_balance; }

/* A lost update: the point between the read and the write is the only place a
 * scheduler can put another deposit. */
void c_probe_deposit(long amount) {
  long seen = g_balance;
  racelab_point_access("c.balance.write", &g_balance, RACELAB_ACCESS_WRITE);
  g_balance = seen + amount;
}

/* A name that lives only for the call, as an FFI's temporary string does. */
void c_probe_temporary_name(void) {
  char name[32];
  strcpy(name, "c.temporary");
  racelab_point(name);
  memset(name, 'x', sizeof name - 1);
  name[sizeof name - 1] = '\0';
}

void c_probe_null_name(void) { racelab_point(NULL); }

const void* c_probe_accesses(void) {
  racelab_point_access("c.read", &g_balance, RACELAB_ACCESS_READ);
  racelab_point_access("c.write", &g_balance, RACELAB_ACCESS_WRITE);
  racelab_point_access("c.unknown", &g_balance, RACELAB_ACCESS_NONE);
  racelab_point_access("c.no_object", NULL, RACELAB_ACCESS_WRITE);
  return &g_balance;
}

int c_probe_is_controlled(void) { return racelab_is_controlled(); }

int c_probe_abi_version(void) { return racelab_c_abi_version(); }
