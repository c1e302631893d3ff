// account.h -- a bank account, instrumented for racelab: deposit() reads the
// balance, reaches an interleaving point and writes it back. Unlocked, two
// deposits can lose one; locked (a racelab::Mutex), they cannot.
#ifndef EXAMPLE_ACCOUNT_H_
#define EXAMPLE_ACCOUNT_H_

#include <racelab/sync.h>

class Account {
 public:
  explicit Account(bool locked) : locked_(locked) {}
  void deposit(long amount);
  long balance() const { return balance_; }

 private:
  bool locked_;
  long balance_ = 0;
  racelab::Mutex mutex_{"account.lock"};
};

#endif
