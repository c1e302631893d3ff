// account_check -- embeds the engine to test Account and c_account_deposit:
// every schedule of two depositing threads with at most one preemption (dfs:1,
// which is complete). Prints each verdict; exits 0 when the unlocked accounts
// lose a deposit and the locked one never does, 1 otherwise.
#include <cstdio>
#include <string>
#include <vector>

#include <racelab/cell.h>
#include <racelab/sync.h>
#include <racelab/workload.h>

#include "account.h"
#include "c_account.h"

namespace {

racelab::Observation check_balance(long balance, int deposits) {
  racelab::Observation obs;
  if (balance != deposits)
    obs.wrong_result = "balance " + std::to_string(balance) + ", expected " + std::to_string(deposits);
  return obs;
}

// One trial: a fresh account, one depositing racelab::Thread per thread.
racelab::Observation deposits(const racelab::TrialInput& in) {
  Account account(/*locked=*/in.mitigation == "locked");
  std::vector<racelab::Thread> threads;
  for (int i = 0; i < in.threads; ++i) threads.emplace_back([&account] { account.deposit(1); });
  for (auto& t : threads) t.join();
  return check_balance(account.balance(), in.threads);
}

racelab::Observation c_deposits(const racelab::TrialInput& in) {
  long balance = 0;
  std::vector<racelab::Thread> threads;
  for (int i = 0; i < in.threads; ++i) threads.emplace_back([&balance] { c_account_deposit(&balance, 1); });
  for (auto& t : threads) t.join();
  return check_balance(balance, in.threads);
}

racelab::WorkloadRegistrar account_registrar{racelab::Workload{
    "account", "Threads deposit into one Account", nlohmann::json::object(), {"unlocked", "locked"}, false,
    /*reset=*/[] {}, &deposits}};
racelab::WorkloadRegistrar c_account_registrar{racelab::Workload{
    "c_account", "Threads deposit through c_account_deposit", nlohmann::json::object(), {"unlocked"}, false,
    /*reset=*/[] {}, &c_deposits}};

}  // namespace

int main() {
  struct Case {
    const char* label;
    const char* workload;
    const char* mitigation;
    bool loses;  // expected: some schedule loses a deposit
  };
  const Case cases[] = {{"unlocked", "account", "unlocked", true},
                        {"locked", "account", "locked", false},
                        {"c_unlocked", "c_account", "unlocked", true}};
  int unexpected = 0;
  for (const Case& c : cases) {
    racelab::CellSpec cell;
    cell.workload = c.workload;
    cell.mitigation = c.mitigation;
    cell.strategy = "dfs:1";
    cell.max_trials = 1000;
    cell.supervised = false;  // in this process: a deposit cannot crash or hang
    racelab::CellSummary sum = racelab::run_cell(cell, [](const racelab::TrialRecord&) {});
    const long long lost = sum.by_outcome.count("wrong_result") ? sum.by_outcome.at("wrong_result") : 0;
    std::printf("%s: %lld schedules (%s), %lld lost a deposit\n", c.label, static_cast<long long>(sum.trials),
                sum.exhausted ? "complete" : "incomplete", lost);
    const bool as_expected = sum.exhausted && (c.loses ? lost > 0 : sum.failures == 0);
    if (!as_expected) ++unexpected;
  }
  return unexpected == 0 ? 0 : 1;
}
