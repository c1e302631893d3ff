#include "account.h"

#include <mutex>

#include <racelab/point.h>

void Account::deposit(long amount) {
  std::unique_lock<racelab::Mutex> lock(mutex_, std::defer_lock);
  if (locked_) lock.lock();
  long seen = balance_;
  racelab::point("account.write");  // before the step it names: the write
  balance_ = seen + amount;
}
