// tests/compile/script_controller.cpp -- see script_controller.h.
#include "script_controller.h"

#include <cstdio>
#include <cstdlib>
#include <thread>

namespace racelab_test {
namespace {
thread_local const ScriptController* t_owner = nullptr;
thread_local int t_id = -1;
}  // namespace

bool ScriptController::manages_current_thread() const { return t_owner == this; }
int ScriptController::me() const { return t_id; }

bool ScriptController::runnable(int id) const {
  if (id < 0 || id >= static_cast<int>(threads_.size())) return false;
  const ThreadInfo& t = threads_[id];
  return !t.done && t.blocked_on == nullptr && t.joining < 0;
}

void ScriptController::schedule(std::unique_lock<std::mutex>&) {
  while (step_ < script_.size()) {
    const int t = script_[step_].thread;
    if (t >= static_cast<int>(threads_.size())) break;  // not created yet: let the others run
    if (threads_[t].done) {
      ++step_;  // an "until the end" step is satisfied; a point step is moot
      continue;
    }
    if (!runnable(t)) {
      skipped_.push_back(std::to_string(t) + "@" + (script_[step_].point.empty() ? "<end>" : script_[step_].point));
      ++step_;
      continue;
    }
    current_ = t;
    cv_.notify_all();
    return;
  }
  if (!runnable(current_)) {
    int next = -1;
    for (int i = 0; i < static_cast<int>(threads_.size()); ++i)
      if (runnable(i)) {
        next = i;
        break;
      }
    if (next < 0) {
      bool all_done = true;
      for (const auto& t : threads_) all_done = all_done && t.done;
      if (!all_done) {
        std::fprintf(stderr, "ScriptController: no runnable thread (deadlock)\n");
        std::abort();
      }
    }
    current_ = next;
  }
  cv_.notify_all();
}

void ScriptController::wait_turn(std::unique_lock<std::mutex>& lock, int me) {
  cv_.wait(lock, [&] { return current_ == me && runnable(me); });
}

void ScriptController::run(const std::function<void()>& body) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads_.assign(1, ThreadInfo{});
    current_ = 0;
  }
  racelab::attach(this);
  std::thread main([&] {
    t_owner = this;
    t_id = 0;
    body();
    on_thread_end(0);
    t_owner = nullptr;
  });
  main.join();
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] {
      for (const auto& t : threads_)
        if (!t.done) return false;
      return true;
    });
  }
  racelab::detach();
}

void ScriptController::on_point(const char* name) {
  std::unique_lock<std::mutex> lock(mu_);
  const int id = me();
  trace_.push_back(std::to_string(id) + ":" + name);
  const int n = ++threads_[id].arrivals[name];
  if (step_ < script_.size() && script_[step_].thread == id && script_[step_].point == name &&
      script_[step_].nth == n) {
    ++step_;
    schedule(lock);
  } else if (step_ < script_.size() && script_[step_].thread != id &&
             script_[step_].thread < static_cast<int>(threads_.size())) {
    schedule(lock);  // a step for another, existing thread is pending
  }
  wait_turn(lock, id);
}

int ScriptController::on_thread_create() {
  std::lock_guard<std::mutex> lock(mu_);
  threads_.push_back(ThreadInfo{});
  return static_cast<int>(threads_.size()) - 1;
}

void ScriptController::on_thread_start(int id) {
  t_owner = this;
  t_id = id;
  std::unique_lock<std::mutex> lock(mu_);
  wait_turn(lock, id);
}

void ScriptController::on_thread_end(int id) {
  std::unique_lock<std::mutex> lock(mu_);
  threads_[id].done = true;
  for (auto& t : threads_)
    if (t.joining == id) t.joining = -1;
  schedule(lock);
  cv_.notify_all();
}

void ScriptController::on_join(int id) {
  std::unique_lock<std::mutex> lock(mu_);
  const int self = me();
  if (threads_[id].done) return;
  threads_[self].joining = id;
  schedule(lock);
  wait_turn(lock, self);
}

void ScriptController::on_block(const void* resource, const char*) {
  std::unique_lock<std::mutex> lock(mu_);
  const int self = me();
  threads_[self].blocked_on = resource;
  schedule(lock);
  wait_turn(lock, self);
}

void ScriptController::on_release(const void* resource) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& t : threads_)
    if (t.blocked_on == resource) t.blocked_on = nullptr;
}

}  // namespace racelab_test
