// racelab/sync.h -- controlled synchronisation primitives.
//
// Drop-in equivalents of std::mutex, std::recursive_mutex, std::shared_mutex,
// std::condition_variable_any and std::thread. With no controller attached they
// are the std:: primitive plus one atomic load. With a controller attached they
// tell the scheduler when the calling thread blocks, on what, and when it may
// continue, so a controlled run never deadlocks the harness itself: if no thread
// can run, the scheduler reports a `hang` outcome and unwinds the trial.
//
// Every acquisition is also an interleaving point, named by the primitive's
// `point_name` (a string literal), e.g. racelab::Mutex m{"queue.lock"}, whose
// object is the primitive itself: an exclusive acquisition writes it, a shared
// one reads it (two shared acquisitions commute), a timed condition wait
// writes the condition variable.
#ifndef RACELAB_SYNC_H_
#define RACELAB_SYNC_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <utility>

#include "racelab/controller.h"

namespace racelab {

namespace detail {

// What Mutex, RecursiveMutex and SharedMutex have in common: exclusive locking
// of a std:: mutex type. Uncontrolled, lock() is the std:: one. Controlled, an
// acquisition is a scheduling point, then a try_lock loop that blocks in the
// scheduler (not in the OS) while another thread owns the mutex; unlock()
// tells the scheduler, which makes the threads blocked on it runnable again.
template <class StdMutex>
class ControlledLockable {
 public:
  explicit ControlledLockable(const char* point_name) : name_(point_name) {}
  ControlledLockable(const ControlledLockable&) = delete;
  ControlledLockable& operator=(const ControlledLockable&) = delete;

  void lock() {
    if (Controller* c = controller_for_this_thread())
      acquire(c, Access::kWrite, [&] { return m_.try_lock(); });
    else
      m_.lock();
  }
  bool try_lock() { return m_.try_lock(); }
  void unlock() {
    m_.unlock();
    released();
  }
  const char* point_name() const { return name_; }

 protected:
  template <class TryLock>
  void acquire(Controller* c, Access access, TryLock try_lock) {
    c->on_access(name_, this, access);
    while (!try_lock()) c->on_block(this, name_);
    c->on_acquire(this, name_);
  }
  void released() {
    if (Controller* c = controller_for_this_thread()) c->on_release(this);
  }

  StdMutex m_;

 private:
  const char* name_;
};

}  // namespace detail

class Mutex : public detail::ControlledLockable<std::mutex> {
 public:
  explicit Mutex(const char* point_name = "mutex.lock") : ControlledLockable(point_name) {}
};

class RecursiveMutex : public detail::ControlledLockable<std::recursive_mutex> {
 public:
  explicit RecursiveMutex(const char* point_name = "recursive_mutex.lock") : ControlledLockable(point_name) {}
};

// Shared (reader) locking takes the same point and blocks the same way.
class SharedMutex : public detail::ControlledLockable<std::shared_mutex> {
 public:
  explicit SharedMutex(const char* point_name = "shared_mutex.lock") : ControlledLockable(point_name) {}

  void lock_shared() {
    if (Controller* c = controller_for_this_thread())
      acquire(c, Access::kRead, [&] { return m_.try_lock_shared(); });
    else
      m_.lock_shared();
  }
  bool try_lock_shared() { return m_.try_lock_shared(); }
  void unlock_shared() {
    m_.unlock_shared();
    released();
  }
};

// Condition variable usable with any of the mutexes above (via std::unique_lock).
// Under control, notify wakes every waiter: waits must re-check their predicate,
// exactly as std:: allows spurious wake-ups.
class CondVar {
 public:
  template <class Lock>
  void wait(Lock& lock) {
    if (Controller* c = controller_for_this_thread()) {
      lock.unlock();
      c->on_block(this, "condvar.wait");
      lock.lock();
    } else {
      cv_.wait(lock);
    }
  }
  template <class Lock, class Pred>
  void wait(Lock& lock, Pred pred) {
    while (!pred()) wait(lock);
  }
  // Under control a timed wait is a scheduling point that may time out: the
  // scheduler cannot know wall time, so the caller sees a timeout whenever the
  // predicate is still false after other threads had a chance to run.
  template <class Lock, class Rep, class Period, class Pred>
  bool wait_for(Lock& lock, std::chrono::duration<Rep, Period> timeout, Pred pred) {
    if (Controller* c = controller_for_this_thread()) {
      if (pred()) return true;
      lock.unlock();
      c->on_access("condvar.wait_for", this, Access::kWrite);
      lock.lock();
      return pred();
    }
    return cv_.wait_for(lock, timeout, std::move(pred));
  }
  void notify_one() { notify_all(); }
  void notify_all() {
    cv_.notify_all();
    if (Controller* c = controller_for_this_thread()) c->on_release(this);
  }

 private:
  std::condition_variable_any cv_;
};

// std::thread whose body is a managed thread when its creator is managed.
class Thread {
 public:
  Thread() = default;
  template <class F>
  explicit Thread(F&& body) : Thread(Touches::kAnything, std::forward<F>(body)) {}
  // first_step: what the body touches before its first point (racelab/point.h).
  template <class F>
  Thread(Touches first_step, F&& body) {
    Controller* c = controller_for_this_thread();
    if (c == nullptr) {
      thread_ = std::thread(std::forward<F>(body));
      return;
    }
    controller_ = c;
    id_ = c->on_thread_create_touching(first_step);
    thread_ = std::thread([c, id = id_, fn = std::function<void()>(std::forward<F>(body))] {
      try {
        c->on_thread_start(id);
        fn();
      } catch (const TrialAborted&) {
        // The controller abandoned the trial; unwinding is all that is left.
      }
      c->on_thread_end(id);
    });
  }
  Thread(Thread&& other) noexcept { *this = std::move(other); }
  Thread& operator=(Thread&& other) noexcept {
    if (thread_.joinable()) join();  // std::thread would terminate here
    thread_ = std::move(other.thread_);
    controller_ = std::exchange(other.controller_, nullptr);
    id_ = std::exchange(other.id_, -1);
    return *this;
  }
  ~Thread() {
    if (thread_.joinable()) join();
  }

  bool joinable() const { return thread_.joinable(); }
  // Under control, first waits in the scheduler for the child to end, so the OS
  // join below never blocks a thread the scheduler believes is running.
  // then: what the caller touches after the join, before its next point.
  void join(Touches then = Touches::kAnything) {
    if (controller_ != nullptr && controller_for_this_thread() == controller_) controller_->on_join_touching(id_, then);
    thread_.join();
  }
  // The controller's id for this thread, or -1 when uncontrolled.
  int managed_id() const { return id_; }

 private:
  std::thread thread_;
  Controller* controller_ = nullptr;
  int id_ = -1;
};

}  // namespace racelab

#endif  // RACELAB_SYNC_H_
