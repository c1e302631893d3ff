#include "engine/free_controller.h"

#include <chrono>
#include <random>
#include <thread>

#include "engine/strategy.h"

namespace racelab {
namespace {
thread_local const FreeController* tl_free = nullptr;
thread_local std::mt19937_64* tl_rng = nullptr;
}  // namespace

bool FreeController::manages_current_thread() const { return tl_free == this; }

void FreeController::enter_main() { on_thread_start(0); }
void FreeController::exit_main() { on_thread_end(0); }

void FreeController::on_thread_start(int id) {
  tl_free = this;
  delete tl_rng;
  tl_rng = new std::mt19937_64(mix_seed(seed_, static_cast<uint64_t>(id)));
}

void FreeController::on_thread_end(int) {
  tl_free = nullptr;
  delete tl_rng;
  tl_rng = nullptr;
  std::lock_guard<std::mutex> lk(mu_);
  released_.notify_all();
}

void FreeController::on_point(const char*) {
  progress_.fetch_add(1, std::memory_order_relaxed);
  if (jitter_ <= 0 || tl_rng == nullptr) return;
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  if (coin(*tl_rng) >= jitter_) return;
  if (coin(*tl_rng) < 0.5) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(1 + (*tl_rng)() % 50));
  }
}

void FreeController::on_block(const void*, const char*) {
  std::unique_lock<std::mutex> lk(mu_);
  released_.wait_for(lk, std::chrono::milliseconds(1));
}

void FreeController::on_release(const void*) {
  progress_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lk(mu_);
  released_.notify_all();
}

}  // namespace racelab
