// tests/compile/script_controller.h -- a test-only racelab::Controller that
// forces one interleaving, deterministically and without sleeps.
//
// Exactly one managed thread runs at a time. The script is a list of steps
// "run thread T until it reaches point P (its nth time)"; when T gets there it
// is held (a latch) and the next step's thread runs. A step whose thread is
// blocked on a lock is dropped -- the code under test (e.g. a mitigation's
// lock) prevented that interleaving -- and recorded in skipped(). A step with
// point "" is satisfied when its thread ends. After the script, the running
// thread keeps running; when it blocks or ends, the lowest runnable id runs.
// Thread ids: the body passed to run() is 0, then racelab::Threads in creation
// order (1, 2, ...).
#ifndef TESTS_COMPILE_SCRIPT_CONTROLLER_H_
#define TESTS_COMPILE_SCRIPT_CONTROLLER_H_

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "racelab/controller.h"

namespace racelab_test {

class ScriptController : public racelab::Controller {
 public:
  struct Step {
    int thread;
    std::string point;  // "" = until the thread ends
    int nth = 1;        // the thread's nth arrival at `point`
  };

  explicit ScriptController(std::vector<Step> script) : script_(std::move(script)) {}

  // Attaches, runs `body` as managed thread 0, waits for every managed thread
  // to end, detaches.
  void run(const std::function<void()>& body);

  // Steps dropped because their thread was blocked (the interleaving was
  // prevented), as "T@point".
  const std::vector<std::string>& skipped() const { return skipped_; }
  // Every arrival at a point, as "T:point", in order.
  const std::vector<std::string>& trace() const { return trace_; }

  bool manages_current_thread() const override;
  void on_point(const char* name) override;
  int on_thread_create() override;
  void on_thread_start(int id) override;
  void on_thread_end(int id) override;
  void on_join(int id) override;
  void on_block(const void* resource, const char* what) override;
  void on_release(const void* resource) override;
  void on_acquire(const void*, const char*) override {}

 private:
  struct ThreadInfo {
    bool done = false;
    const void* blocked_on = nullptr;  // a resource, or &joining_ entry
    int joining = -1;                  // waiting for this thread to end
    std::map<std::string, int> arrivals;
  };
  bool runnable(int id) const;
  // Picks who runs next and wakes it; the caller then waits for its turn.
  void schedule(std::unique_lock<std::mutex>& lock);
  void wait_turn(std::unique_lock<std::mutex>& lock, int me);
  int me() const;

  std::vector<Step> script_;
  size_t step_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ThreadInfo> threads_;
  int current_ = 0;
  std::vector<std::string> skipped_;
  std::vector<std::string> trace_;
};

}  // namespace racelab_test

#endif  // TESTS_COMPILE_SCRIPT_CONTROLLER_H_
