// engine/scheduler.h -- the controlled scheduler: a racelab::Controller under
// which exactly one managed thread runs at a time.
//
// Handoff is per thread: each managed thread waits on its own Handoff
// (engine/handoff.h: a short spin, then a futex) and the running thread
// signals exactly the one its strategy picked, so a switch costs one targeted
// wake-up, no lock round trip and, when the picked thread still spins, no
// system call. A step at which the strategy keeps the running thread takes the
// scheduler's lock once and neither allocates nor wakes anyone: decisions and
// events are recorded compactly (names by pointer, runnable sets pooled) and
// expanded into Decision / Event only when the trial's results are taken.
//
// Every call that can change who runs (a point, a block, a join, a thread's
// end) is one *step*: the strategy picks among the runnable threads and the
// choice is recorded as a Decision. Blocking in racelab::Mutex & co is known
// here (a blocked thread is not runnable until its resource is released), so
// when no thread can run and not all have ended, that is a real deadlock: the
// trial ends as `hang` and is unwound by throwing TrialAborted out of every
// blocked call. While unwinding (std::uncaught_exceptions() > 0) no call throws
// again; after an abort every thread runs freely until it ends, so the process
// survives and runs the next trial.
//
// Determinism: the scheduler controls only threads created through
// racelab::Thread (plus thread 0, the trial body). LibTorch's own pool threads
// are unmanaged; the workload glue pins LibTorch to one intra-op thread
// (at::set_num_threads(1)) so compute never fans out. Instrumented calls made
// by an unmanaged thread during a trial are counted (uncontrolled()) and
// reported as uncontrolled nondeterminism; a replay that cannot follow its
// schedule reports `divergence`.
#ifndef RACELAB_ENGINE_SCHEDULER_H_
#define RACELAB_ENGINE_SCHEDULER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/handoff.h"
#include "engine/strategy.h"
#include "engine/trial.h"
#include "racelab/controller.h"

namespace racelab {

class Scheduler : public Controller {
 public:
  struct Options {
    int64_t max_steps = 200000;   // more steps: livelock, ends as hang
    int64_t fair_steps = 0;       // ChoiceContext::fair_steps (0: none)
    // Polls as the exec host sees them (sched_yield, sleeps, timed waits in a
    // program no one here wrote): a yield hands the turn to a working thread
    // before another poller, and strategies rank pollers lowest
    // (ChoiceContext::polling, requester_yielded). Off elsewhere: the Python
    // host's yields are waits that a notify ends, and ranking the woken thread
    // lowest hid the very interleavings its races need.
    bool poll_aware = false;
    bool record_events = true;
    size_t max_events = 50000;    // the timeline is truncated past this
    // Called (under the scheduler's lock) for every decision as it is made; the
    // worker mirrors decisions into shared memory so a crash cannot lose them.
    std::function<void(const DecisionView&)> on_decision;
  };

  Scheduler(Strategy* strategy, Options options);
  ~Scheduler() override;

  // Makes the calling thread managed thread 0 (the trial body). Call once,
  // on the body's thread, before the body runs.
  void enter_main();
  // Thread 0's body returned (or threw): it ends like any managed thread.
  void exit_main();

  // Ends the trial from outside (the watchdog): blocked threads throw.
  void abort(Outcome outcome, const std::string& detail);
  // Blocks until every managed thread has ended or `seconds` passed.
  bool wait_finished(double seconds);

  // Grows with every step and event; the watchdog watches it.
  int64_t progress() const { return progress_.load(std::memory_order_relaxed); }

  // Results; read after the trial ended.
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  Outcome abort_outcome() const { return abort_outcome_; }
  const std::string& abort_detail() const { return abort_detail_; }
  int64_t abort_step() const { return abort_step_; }
  int64_t steps() const { return step_; }
  int64_t preemptions() const { return preemptions_; }
  int threads_seen() const { return static_cast<int>(threads_.size()); }
  int64_t uncontrolled() const { return uncontrolled_.load(); }
  std::vector<Decision> take_decisions();
  std::vector<Event> take_events();
  // While threads may still run (a trial process reporting before it ends).
  std::vector<Event> copy_events() const;
  bool events_truncated() const { return events_truncated_; }

  // Controller.
  bool manages_current_thread() const override;
  void on_point(const char* name) override;
  void on_access(const char* name, const void* object, Access access) override;
  int on_thread_create() override { return on_thread_create_touching(Touches::kAnything); }
  int on_thread_create_touching(Touches first_step) override;
  void on_thread_start(int id) override;
  void on_thread_end(int id) override;
  void on_join(int id) override { on_join_touching(id, Touches::kAnything); }
  void on_join_touching(int id, Touches then) override;
  void on_block(const void* resource, const char* what) override;
  void on_release(const void* resource) override;
  void on_acquire(const void* resource, const char* what) override;

  // Hosts that see more than racelab::point (the exec host's preload shim):
  //  - on_yield(name): a step at which the caller steps aside (sched_yield, a
  //    timed wait): another runnable thread is chosen when there is one --
  //    one that does work before another that polls -- and the choice is not
  //    a preemption. The caller counts as polling until its next other step
  //    (ChoiceContext::polling): the step limit is a livelock only when every
  //    runnable thread polls.
  //  - let_go(thread, why): the watchdog saw `thread` run without reaching a
  //    step for too long (an uncontrolled wait: a futex, a spin loop, a pool
  //    racelab cannot see). If it is still the running thread and another can
  //    run, it is let go -- it runs on freely, no longer waited for -- and the
  //    step is recorded with Decision::let_go, so a replay can say that
  //    determinism was lost there. A thread let go rejoins at its next call
  //    into the scheduler and waits for its turn. Returns whether it let go.
  //  - current(): the running managed thread, -1 when none (all let go).
  void on_yield(const char* name);
  //  - on_sleep(name, ns): the caller sleeps for ns of logical time (below):
  //    it cannot run until that much time has passed, while the others run.
  //    A sleep of 0 is a yield.
  void on_sleep(const char* name, int64_t ns);

  // Timed waits (a wait with a timeout: Python's join, acquire and wait, a C
  // program's pthread_cond_timedwait, sem_timedwait and the like): as
  // on_block / on_join, but the caller becomes runnable again, timed out, once
  // logical time reaches deadline_ns. Logical time gets there through the
  // others' steps, or by a jump when nothing but pollers could run, no thread
  // was let go (it runs in real time, which a jump would not wait for) and
  // this deadline is the earliest. A timeout is the program's safety net:
  // under control it fires no earlier than that, so a wait returns as soon as
  // what it waits for happens, as natively. Returns true when woken (a
  // release, the thread's end), false when timed out. A deadline already
  // past is a step aside and a timeout. Every timeout that fired is kept
  // (fired_timeouts()): a failure that needed one says so.
  bool on_block_until(const void* resource, const char* what, int64_t deadline_ns);
  bool on_join_until(int id, const char* what, int64_t deadline_ns);
  struct FiredTimeout {
    int thread = -1;
    std::string what;            // the wait, as its caller named it
    int64_t waited_ns = 0;       // logical time from the wait's start to its deadline
    bool nothing_else_ran = false;  // fired by a jump: no other thread could do anything
    int64_t step = 0;
  };
  std::vector<FiredTimeout> fired_timeouts() const;

  // Logical time, in ns since the trial began: every step takes kStepNs, and
  // when nothing but pollers can run and threads sleep, time jumps to the
  // first wake-up.
  // It depends on the schedule only, so a replay sees the same times. The
  // exec host's clocks read it (harness/preload/time.cpp).
  static constexpr int64_t kStepNs = 10000;
  int64_t now_ns() const;
  bool let_go(int thread, const std::string& why);
  //  - step_out(why): the calling thread is about to wait for something no
  //    managed thread does (another process; a thread racelab does not
  //    manage, such as multiprocessing's pool handlers): it is let go, as by
  //    the watchdog, so the others run meanwhile and logical time does not
  //    jump past a real wait. It waits for real, with its real timeout, as
  //    natively, and rejoins at its next call. Recorded as a let_go step.
  void step_out(const char* why);
  //  - interrupt(thread): `thread`, blocked, joining or asleep, is runnable
  //    again, as after a spurious wake-up: its wait returns and the caller
  //    of the wait decides what to do (the exec host's deferred cancellation:
  //    a thread cancelled while it waits must reach its cancellation point).
  //    No step of its own: it happens within the calling thread's step.
  void interrupt(int thread);
  int current() const;
  // Whether `thread` was let go and has not called in since.
  bool is_free(int thread) const;

 private:
  enum class State { kRunnable, kBlocked, kJoining, kEnded, kFree, kSleeping };
  struct ManagedThread {
    State state = State::kRunnable;
    int64_t wake_ns = 0;  // kSleeping: runnable again at this logical time
    // kBlocked / kJoining with a timeout: its deadline and when the wait
    // began (-1: an untimed wait); timed_out: it ended by the deadline.
    int64_t deadline_ns = -1;
    int64_t wait_began_ns = 0;
    bool timed_out = false;
    const void* blocked_on = nullptr;
    int join_target = -1;
    Handoff turn;  // this thread's own wake-up
  };
  // A Decision as recorded during the trial (see take_decisions()).
  struct DecisionRec {
    int thread;
    int requester;
    const char* point;       // nullptr: ""
    uint32_t runnable_at;    // into runnable_pool_
    uint32_t runnable_size;
    int object;
    bool write, preemption, requester_runnable, let_go;
  };
  // An Event as recorded: `what` is a name by pointer, or dynamic_[dynamic].
  struct EventRec {  // 32 bytes: one is written at almost every step
    int64_t step;
    const char* kind;
    const char* what;
    int thread;
    int dynamic;  // -1: `what` holds it
  };
  using Lock = std::unique_lock<std::mutex>;

  int self() const;
  // `what` by pointer: a point name or another string that outlives the trial.
  void add_event(int thread, const char* kind, const char* what);
  void add_event(int thread, const char* kind, std::string what);
  bool event_room();
  void advance();  // progress_ + 1, under mu_
  Event expand(const EventRec& e) const;
  // One step, by the running thread `self` whose state is already updated.
  // yield: `self` steps aside when another can run; let_go: see let_go().
  void reschedule(Lock& lk, int self, bool yield = false, bool let_go = false);
  // A thread that was let go calls in again: it waits until it is chosen
  // (at once when no thread is running) and is the running thread after.
  // The entry every scheduling step shares: a thread that was let go rejoins,
  // and a poller (polls) lets real time pass while a thread runs freely.
  // Throws TrialAborted (or, while unwinding, returns with lk unlocked) once
  // the trial is aborted.
  void enter_step(Lock& lk, int me, const char* name, bool polls);
  void rejoin(Lock& lk, int self, const char* where);
  // Waits until `self` is chosen again or the trial is aborted (true), or
  // until it turns out the watchdog let it go before it woke (false: it runs
  // freely now). Returns with lk released: a thread picked to run need not
  // take the lock again.
  bool wait_turn(Lock& lk, int self);
  // Hands the turn to `next` (current_ is already set), or wakes it after an abort.
  void signal(int next) { threads_[next].turn.signal(); }
  // A point or a yield by the calling thread: its next step (touching `object`,
  // nullptr for anything) is pending, the strategy picks who runs, and the
  // caller waits its turn. kind names the event in the trace.
  void step_at(const char* name, const void* object, bool write, const char* kind, bool yield);
  void abort_locked(Outcome outcome, const std::string& detail);
  // After an abort: throw TrialAborted unless the caller is already unwinding.
  void throw_aborted(Lock& lk);
  std::string describe_deadlock() const;
  // The step limit was reached: a livelock when every runnable thread polls
  // (and none was let go, which may still come back), else a run too long for
  // the limit. Names the threads and where they are.
  std::string describe_step_limit(const std::vector<int>& runnable) const;
  // The trial's number for an object (first appearance order); nullptr: -1.
  Footprint footprint_of(const void* object, bool write);
  const char* name_of(const void* resource) const;
  // Adds to Decision::touched of the step `self` is running (if it runs one).
  void touch_current(int self, int object);
  // Thread `id`'s lifecycle as an object: its creator's step, its first step
  // and its last step write it, and so does the step of whoever joins it.
  int lifecycle_object(int id) { return footprint_of(&threads_[id], true).object; }

  Strategy* strategy_;
  Options options_;

  mutable std::mutex mu_;
  std::deque<ManagedThread> threads_;     // deque: stable addresses as it grows
  std::vector<const char*> pending_;      // per thread: where it waits
  std::vector<Footprint> footprints_;     // per thread: what its next step touches
  int free_ = 0;                          // threads let go that have not come back
  std::atomic<int64_t> skipped_ns_{0};    // logical time jumped over (now_ns())
  int64_t now_locked() const { return step_ * kStepNs + skipped_ns_.load(std::memory_order_relaxed); }
  // Makes sleepers whose time has come runnable; with `jump`, when nothing
  // but pollers could run, moves time on to the first wake-up first.
  // Timed waiters whose deadline has come time out too; with `jump` and no
  // thread let go, the earliest of those deadlines counts as a wake-up.
  void wake_sleepers(bool jump);
  // Puts `self` in a timed wait (state already kBlocked / kJoining), runs the
  // step and waits; false when it timed out.
  bool wait_until(Lock& lk, int self, int64_t deadline_ns);
  // A timed wait's entry: `me` rejoins if it was let go; false once the trial
  // is aborted (throw_aborted ran: it threw, or returned while unwinding).
  bool enter_wait(Lock& lk, int me, const char* what);
  std::vector<FiredTimeout> fired_;
  std::vector<char> polling_;             // per thread: its last request stepped aside (ChoiceContext::polling)
  std::vector<int64_t> waiting_since_;    // per thread: ChoiceContext::waiting_since
  std::unordered_map<const void*, int> object_ids_;
  // Written under mu_; read without it by a thread that was signalled.
  std::atomic<int> current_{0};
  std::atomic<bool> aborted_{false};
  bool finished_ = false;
  std::condition_variable state_cv_;      // finished / ended-after-abort
  Outcome abort_outcome_ = Outcome::kHolds;
  std::string abort_detail_;
  int64_t abort_step_ = -1;

  int64_t step_ = 0;
  int64_t preemptions_ = 0;
  std::vector<int> runnable_;             // scratch: this step's candidates
  std::vector<DecisionRec> decisions_;
  std::vector<int> runnable_pool_;        // the decisions' runnable sets, a repeat shares its predecessor's
  std::vector<std::pair<size_t, int>> touched_;  // (decision, object), in decision order
  std::vector<EventRec> events_;
  std::vector<std::string> dynamic_;      // event texts made at run time
  bool events_truncated_ = false;
  std::unordered_map<const void*, const char*> names_;

  std::atomic<int64_t> progress_{0};
  mutable std::atomic<int64_t> uncontrolled_{0};
};

}  // namespace racelab

#endif  // RACELAB_ENGINE_SCHEDULER_H_
