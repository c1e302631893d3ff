// bank_workloads.cpp -- registers the workload `overdraft`: threads withdraw from
// one account, each after checking that the balance covers it. Unlocked, the
// checks can all pass before any withdrawal: the balance goes negative (a
// check-then-act race). Mitigation `lock`: check and withdrawal under one
// racelab::Mutex.
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <racelab/point.h>
#include <racelab/sync.h>
#include <racelab/workload.h>

namespace {

struct Account {
  int64_t balance = 0;
  racelab::Mutex mutex{"account.lock"};
};

void withdraw(Account& account, int64_t amount, bool locked) {
  std::unique_lock<racelab::Mutex> lock(account.mutex, std::defer_lock);
  if (locked) lock.lock();
  if (account.balance < amount) return;  // declined
  racelab::point("account.withdraw");    // checked, not yet withdrawn
  account.balance -= amount;
}

racelab::Observation overdraft(const racelab::TrialInput& in) {
  Account account;
  account.balance = in.knobs.at("balance").get<int64_t>();
  const int64_t amount = in.knobs.at("amount").get<int64_t>();
  std::vector<racelab::Thread> threads;
  for (int i = 0; i < in.threads; ++i)
    threads.emplace_back([&, locked = in.mitigation == "lock"] { withdraw(account, amount, locked); });
  for (auto& t : threads) t.join();
  racelab::Observation obs;
  if (account.balance < 0) obs.wrong_result = "overdrawn: balance " + std::to_string(account.balance);
  obs.metrics["balance"] = account.balance;
  return obs;
}

racelab::WorkloadRegistrar registrar{racelab::Workload{
    "overdraft",
    "Threads withdraw `amount` from one account holding `balance`, each after checking it covers the amount",
    nlohmann::json{{"balance", 100}, {"amount", 60}},
    {"none", "lock"},
    /*needs_free_running=*/false,
    /*reset=*/[] {},
    &overdraft,
    /*check_knobs=*/
    [](const nlohmann::json& knobs) {
      racelab::int_knob(knobs, "balance", 0, 1000000);
      racelab::int_knob(knobs, "amount", 1, 1000000);
    }}};

}  // namespace
