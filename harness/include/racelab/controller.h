// racelab/controller.h -- how a scheduler attaches to the instrumentation.
//
// The system under test never sees this interface: it calls racelab::point() and
// uses the primitives of racelab/sync.h. Those forward to the attached Controller,
// which is the harness engine's scheduler (harness/engine/) or a test double.
//
// Contract (all calls are made by the thread concerned):
//  - on_point(name): the thread reached an interleaving point. The controller may
//    block the caller until its strategy schedules it again.
//  - on_access(name, object, access): the same, for a point that says which
//    object its next step touches and how (racelab/point.h). The default
//    forgets the object, so a controller that does not use it (a test double,
//    the free-running one) need not implement it.
//  - Thread lifecycle: the parent calls on_thread_create() before it spawns a
//    managed thread and gets the child's id; the child calls on_thread_start(id)
//    first (and blocks until it is scheduled) and on_thread_end(id) last. A parent
//    joining calls on_join(id), which returns once the child has ended.
//    The _touching variants say what the step that begins there touches
//    (racelab/point.h Touches); the defaults forget it.
//  - Blocking: a primitive that cannot proceed (a taken mutex, a condition wait)
//    calls on_block(resource, what); it returns when the scheduler resumes the
//    thread after someone released that resource, and the caller retries.
//    on_release(resource) makes every thread blocked on it runnable again.
//    on_acquire(resource, what) is informational (timelines, lock-wait spans).
//  - manages_current_thread(): false for threads the controller does not own
//    (LibTorch's own pool threads, the watchdog); primitives then fall back to
//    their std:: behaviour.
//
// When the scheduler finds no runnable thread (a real deadlock) it ends the trial
// by throwing TrialAborted out of the blocked calls; racelab::Thread swallows it.
#ifndef RACELAB_CONTROLLER_H_
#define RACELAB_CONTROLLER_H_

#include <stdexcept>
#include <string>

#include "racelab/point.h"

namespace racelab {

class Controller {
 public:
  virtual ~Controller() = default;

  virtual bool manages_current_thread() const = 0;
  virtual void on_point(const char* name) = 0;
  virtual void on_access(const char* name, const void* object, Access access) {
    (void)object;
    (void)access;
    on_point(name);
  }

  virtual int on_thread_create() = 0;
  virtual void on_thread_start(int id) = 0;
  virtual void on_thread_end(int id) = 0;
  virtual void on_join(int id) = 0;
  virtual int on_thread_create_touching(Touches first_step) {
    (void)first_step;
    return on_thread_create();
  }
  virtual void on_join_touching(int id, Touches then) {
    (void)then;
    on_join(id);
  }

  virtual void on_block(const void* resource, const char* what) = 0;
  virtual void on_release(const void* resource) = 0;
  virtual void on_acquire(const void* resource, const char* what) = 0;
};

// Thrown out of a blocked primitive when the controller abandons the trial
// (deadlock, watchdog, divergence). Not an error of the system under test.
class TrialAborted : public std::runtime_error {
 public:
  explicit TrialAborted(const std::string& why) : std::runtime_error(why) {}
};

// At most one controller is attached at a time; attach() replaces none.
void attach(Controller* controller);
void detach();

// The attached controller if it manages the calling thread, else nullptr.
inline Controller* controller_for_this_thread() {
  Controller* c = detail::g_controller.load(std::memory_order_acquire);
  return (c != nullptr && c->manages_current_thread()) ? c : nullptr;
}

}  // namespace racelab

#endif  // RACELAB_CONTROLLER_H_
