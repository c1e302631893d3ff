// engine/free_controller.h -- the `os+jitter` strategy: threads run freely (the
// OS schedules them) and every point may yield or sleep a little at random,
// like a stress/chaos test. Nothing is serialised and nothing is replayable;
// the controller exists only to add jitter and to count progress for the
// watchdog. Plain `os` attaches no controller at all.
#ifndef RACELAB_ENGINE_FREE_CONTROLLER_H_
#define RACELAB_ENGINE_FREE_CONTROLLER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "racelab/controller.h"

namespace racelab {

class FreeController : public Controller {
 public:
  // jitter: probability in [0,1] that a point yields or sleeps (up to 50 us).
  FreeController(double jitter, uint64_t seed) : jitter_(jitter), seed_(seed) {}

  void enter_main();
  void exit_main();
  int64_t progress() const { return progress_.load(std::memory_order_relaxed); }
  int threads_seen() const { return next_id_.load(); }

  bool manages_current_thread() const override;
  void on_point(const char* name) override;
  int on_thread_create() override { return next_id_.fetch_add(1); }
  void on_thread_start(int id) override;
  void on_thread_end(int id) override;
  void on_join(int) override {}
  // A blocked thread waits for a release of anything (bounded, so a release
  // that slips in before the wait costs at most a millisecond).
  void on_block(const void* resource, const char* what) override;
  void on_release(const void* resource) override;
  void on_acquire(const void*, const char*) override { progress_.fetch_add(1, std::memory_order_relaxed); }

 private:
  double jitter_;
  uint64_t seed_;
  std::atomic<int> next_id_{1};
  std::atomic<int64_t> progress_{0};
  std::mutex mu_;
  std::condition_variable released_;
};

}  // namespace racelab

#endif  // RACELAB_ENGINE_FREE_CONTROLLER_H_
