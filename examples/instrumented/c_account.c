#include "c_account.h"

#include <racelab/racelab.h>

void c_account_deposit(long* balance, long amount) {
  long seen = *balance;
  racelab_point_access("c_account.write", balance, RACELAB_ACCESS_WRITE);
  *balance = seen + amount;
}
