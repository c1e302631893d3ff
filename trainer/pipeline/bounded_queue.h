// trainer/pipeline/bounded_queue.h -- the producer -> worker hand-off.
//
// A classic bounded queue on racelab::Mutex/CondVar (so a racelab scheduler can
// control it). close() wakes everyone: push then fails and pop drains what is
// left and then returns nullopt. Used with one queue per worker, so each
// worker's data stream is fixed whatever the thread timing.
#ifndef TRAINER_PIPELINE_BOUNDED_QUEUE_H_
#define TRAINER_PIPELINE_BOUNDED_QUEUE_H_

#include <deque>
#include <mutex>
#include <optional>
#include <utility>

#include "racelab/sync.h"

namespace racelab::trainer {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // Blocks while full. False when the queue was closed (the item is dropped).
  bool push(T item) {
    std::unique_lock<racelab::Mutex> lock(mu_);
    not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    lock.unlock();
    not_empty_.notify_all();
    return true;
  }
  // Blocks while empty and open.
  std::optional<T> pop() {
    std::unique_lock<racelab::Mutex> lock(mu_);
    not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    lock.unlock();
    not_full_.notify_all();
    return item;
  }
  void close() {
    {
      std::lock_guard<racelab::Mutex> lock(mu_);
      closed_ = true;
    }
    not_full_.notify_all();
    not_empty_.notify_all();
  }

 private:
  racelab::Mutex mu_{"queue.lock"};
  racelab::CondVar not_full_, not_empty_;
  std::deque<T> items_;
  size_t capacity_;
  bool closed_ = false;
};

}  // namespace racelab::trainer

#endif  // TRAINER_PIPELINE_BOUNDED_QUEUE_H_
