#include "engine/scheduler.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>

#include <fmt/format.h>

namespace racelab {
namespace {
// Which scheduler owns the calling thread, and its id there. Reset when the
// thread ends, so a later scheduler at the same address cannot mistake it.
// Read at every step: in the exec host's preload library (loaded at start-up,
// never by dlopen) they are initial-exec, so reading them is no call to
// __tls_get_addr.
#ifdef RACELAB_TLS_INITIAL_EXEC
#define RACELAB_TLS __attribute__((tls_model("initial-exec")))
#else
#define RACELAB_TLS
#endif
thread_local const Scheduler* tl_scheduler RACELAB_TLS = nullptr;
thread_local int tl_id RACELAB_TLS = -1;
}  // namespace

Scheduler::Scheduler(Strategy* strategy, Options options) : strategy_(strategy), options_(std::move(options)) {
  threads_.emplace_back();  // thread 0: the trial body, running from the start
  pending_.push_back("trial.start");
  footprints_.emplace_back();
  polling_.push_back(0);
  waiting_since_.push_back(-1);
  current_ = 0;
  // Room for a trial's steps up front, so a step seldom grows (and copies) the
  // records. Only what is written is ever faulted in.
  constexpr size_t kRoom = 1 << 16;
  decisions_.reserve(static_cast<size_t>(std::min<int64_t>(options_.max_steps, kRoom)));
  runnable_pool_.reserve(64);
  if (options_.record_events) events_.reserve(std::min(options_.max_events, kRoom));
}

Scheduler::~Scheduler() = default;

int Scheduler::self() const { return tl_id; }

bool Scheduler::manages_current_thread() const {
  if (tl_scheduler == this) return true;
  // An instrumented call from a thread we do not schedule (LibTorch's pool, a
  // raw std::thread): its timing is the OS's, so the run is not fully ours.
  uncontrolled_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void Scheduler::enter_main() {
  tl_scheduler = this;
  tl_id = 0;
  std::lock_guard<std::mutex> lk(mu_);
  add_event(0, "start", "thread.start");
}

void Scheduler::exit_main() { on_thread_end(0); }

void Scheduler::advance() {
  // Written under mu_ only: no read-modify-write needed, the watchdog just reads.
  progress_.store(progress_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

bool Scheduler::event_room() {
  advance();
  if (!options_.record_events) return false;
  if (events_.size() >= options_.max_events) {
    events_truncated_ = true;
    return false;
  }
  return true;
}

void Scheduler::add_event(int thread, const char* kind, const char* what) {
  if (event_room()) events_.push_back(EventRec{step_, kind, what ? what : "", thread, -1});
}

void Scheduler::add_event(int thread, const char* kind, std::string what) {
  if (!event_room()) return;
  events_.push_back(EventRec{step_, kind, nullptr, thread, static_cast<int>(dynamic_.size())});
  dynamic_.push_back(std::move(what));
}

Event Scheduler::expand(const EventRec& e) const {
  return Event{e.step, e.thread, e.kind, e.dynamic < 0 ? std::string(e.what) : dynamic_[e.dynamic]};
}

std::vector<Event> Scheduler::take_events() {
  std::vector<Event> out;
  out.reserve(events_.size());
  for (const EventRec& e : events_) out.push_back(expand(e));
  events_.clear();
  dynamic_.clear();
  return out;
}

std::vector<Decision> Scheduler::take_decisions() {
  std::vector<Decision> out(decisions_.size());
  for (size_t i = 0; i < decisions_.size(); ++i) {
    const DecisionRec& r = decisions_[i];
    Decision& d = out[i];
    d.step = static_cast<int64_t>(i);
    d.thread = r.thread;
    d.point = r.point ? r.point : "";
    d.preemption = r.preemption;
    d.requester = r.requester;
    d.requester_runnable = r.requester_runnable;
    d.runnable.assign(runnable_pool_.begin() + r.runnable_at, runnable_pool_.begin() + r.runnable_at + r.runnable_size);
    d.object = r.object;
    d.write = r.write;
    d.let_go = r.let_go;
  }
  for (const auto& [i, object] : touched_) out[i].touched.push_back(object);
  decisions_.clear();
  runnable_pool_.clear();
  touched_.clear();
  return out;
}

Footprint Scheduler::footprint_of(const void* object, bool write) {
  if (object == nullptr) return Footprint{};
  // find first: emplace would allocate a node even for a known object.
  auto it = object_ids_.find(object);
  if (it == object_ids_.end()) it = object_ids_.emplace(object, static_cast<int>(object_ids_.size())).first;
  return Footprint{it->second, write};
}

void Scheduler::touch_current(int self, int object) {
  if (self < 0 || decisions_.empty() || decisions_.back().thread != self) return;
  const size_t last = decisions_.size() - 1;
  for (auto it = touched_.rbegin(); it != touched_.rend() && it->first == last; ++it)
    if (it->second == object) return;
  touched_.emplace_back(last, object);
}

const char* Scheduler::name_of(const void* resource) const {
  auto it = names_.find(resource);
  return it == names_.end() ? "resource" : it->second;
}

std::string Scheduler::describe_deadlock() const {
  std::string out = "deadlock: no runnable thread;";
  for (size_t i = 0; i < threads_.size(); ++i) {
    const auto& t = threads_[i];
    if (t.state == State::kBlocked)
      out += fmt::format(" thread {} blocked on {};", i, name_of(t.blocked_on));
    else if (t.state == State::kJoining)
      out += fmt::format(" thread {} joining thread {};", i, t.join_target);
  }
  out.pop_back();
  return out;
}

std::string Scheduler::describe_step_limit(const std::vector<int>& runnable) const {
  std::string where;
  bool all_poll = !runnable.empty();
  for (int t : runnable) {
    all_poll = all_poll && polling_[t] != 0;
    where += fmt::format("{}thread {} {} {}", where.empty() ? "" : ", ", t, polling_[t] ? "polls at" : "works at",
                         pending_[t] ? pending_[t] : "?");
  }
  if (all_poll && free_ == 0)
    return fmt::format("livelock: step limit {} reached and every runnable thread only polls, waiting for something "
                       "no thread will do ({})",
                       options_.max_steps, where);
  if (all_poll)
    return fmt::format("livelock: step limit {} reached twice over while every runnable thread polls and a "
                       "thread that was let go (an uncontrolled wait) never came back ({})",
                       options_.max_steps, where);
  return fmt::format("step limit {} reached while threads still do work ({}): not a livelock but a run longer than "
                     "the limit; raise it (racelab exec --max-steps)",
                     options_.max_steps, where);
}

void Scheduler::abort_locked(Outcome outcome, const std::string& detail) {
  if (aborted_) return;  // the first reason wins
  abort_outcome_ = outcome;
  abort_detail_ = detail;
  abort_step_ = step_;
  aborted_.store(true, std::memory_order_seq_cst);
  for (size_t i = 0; i < threads_.size(); ++i) signal(static_cast<int>(i));
  state_cv_.notify_all();
}

void Scheduler::abort(Outcome outcome, const std::string& detail) {
  std::lock_guard<std::mutex> lk(mu_);
  abort_locked(outcome, detail);
}

void Scheduler::throw_aborted(Lock& lk) {
  std::string why = abort_detail_;
  lk.unlock();
  if (std::uncaught_exceptions() == 0) throw TrialAborted(why);
  // Already unwinding (a destructor reached a point or a lock): throwing again
  // would terminate the process. Return; the caller retries or carries on, and
  // every thread now runs freely, so whatever it waits for is also unwinding.
  std::this_thread::yield();
}

int64_t Scheduler::now_ns() const {
  std::lock_guard<std::mutex> lk(mu_);
  return now_locked();
}

void Scheduler::wake_sleepers(bool jump) {
  int64_t first = INT64_MAX;           // the first sleeper's wake-up
  int64_t first_deadline = INT64_MAX;  // the first timed wait's deadline
  bool any_working = false;  // runnable and not polling
  for (size_t i = 0; i < threads_.size(); ++i) {
    const ManagedThread& t = threads_[i];
    if (t.state == State::kSleeping) first = std::min(first, t.wake_ns);
    if ((t.state == State::kBlocked || t.state == State::kJoining) && t.deadline_ns >= 0)
      first_deadline = std::min(first_deadline, t.deadline_ns);
    any_working = any_working || (t.state == State::kRunnable && polling_[i] == 0);
  }
  if (first == INT64_MAX && first_deadline == INT64_MAX) return;
  const int64_t now = now_locked();
  // Nothing to run but pollers: they would only burn steps until the sleeper
  // wakes (a poller waiting a second would use half a million steps), so the
  // time they would spend passes at once. A timed wait's deadline counts only
  // while no thread was let go: that thread runs in real time and may yet
  // release what the wait waits for, and a timeout is a last resort.
  int64_t target = first;
  if (free_ == 0) target = std::min(target, first_deadline);
  bool jumped = false;
  if (jump && !any_working && target != INT64_MAX && target > now) {
    skipped_ns_.fetch_add(target - now, std::memory_order_relaxed);
    jumped = true;
  }
  const int64_t at = now_locked();
  for (size_t i = 0; i < threads_.size(); ++i) {
    ManagedThread& t = threads_[i];
    if (t.state == State::kSleeping && t.wake_ns <= at) t.state = State::kRunnable;
    if ((t.state == State::kBlocked || t.state == State::kJoining) && t.deadline_ns >= 0 && t.deadline_ns <= at) {
      t.state = State::kRunnable;
      t.blocked_on = nullptr;
      t.join_target = -1;
      t.timed_out = true;
      // A wait that timed out polls, as a thread that yields does, until its
      // next other step: one that loops on timed waits for what no thread
      // will do is a livelock (describe_step_limit), not work.
      polling_[i] = 1;
      FiredTimeout f;
      f.thread = static_cast<int>(i);
      f.what = pending_[i] ? pending_[i] : "timed wait";
      f.waited_ns = t.deadline_ns - t.wait_began_ns;
      f.nothing_else_ran = jumped && t.deadline_ns == target;
      f.step = step_;
      t.deadline_ns = -1;
      add_event(f.thread, "timeout", fmt::format("{} expired after {:g} s of logical time{}", f.what,
                                                 static_cast<double>(f.waited_ns) / 1e9,
                                                 f.nothing_else_ran ? " (no other thread could run)" : ""));
      fired_.push_back(std::move(f));
    }
  }
}

std::vector<Scheduler::FiredTimeout> Scheduler::fired_timeouts() const {
  std::lock_guard<std::mutex> lk(mu_);
  return fired_;
}

void Scheduler::reschedule([[maybe_unused]] Lock& lk, int self, bool yield, bool let_go) {  // lk: held by the caller
  std::vector<int>& runnable = runnable_;
  runnable.clear();
  // Sleepers whose time has come run again; when nothing but pollers can
  // run, time jumps to the first wake-up (a thread let go may still call in,
  // but it runs in real time, which logical time does not wait for).
  wake_sleepers(/*jump=*/true);
  // One pass: the candidates, whether all have ended, and how long each
  // candidate has waited as one (starved_thread()); a thread that could not
  // run in between starts its wait anew.
  bool all_ended = true;
  const bool any_free = free_ > 0;
  for (size_t i = 0; i < threads_.size(); ++i) {
    if (threads_[i].state != State::kEnded) all_ended = false;
    if (threads_[i].state != State::kRunnable) {
      waiting_since_[i] = -1;
      continue;
    }
    runnable.push_back(static_cast<int>(i));
    if (waiting_since_[i] < 0) waiting_since_[i] = step_;
  }
  if (runnable.empty()) {
    if (all_ended) {
      finished_ = true;
      state_cv_.notify_all();
    } else if (any_free) {
      // A thread that was let go runs on and may release what the others wait
      // for: nobody runs until it calls in again (or the watchdog gives up).
      current_ = -1;
    } else {
      abort_locked(Outcome::kHang, describe_deadlock());
    }
    return;
  }
  if (step_ >= options_.max_steps) {
    // Pollers waiting for a thread that was let go wait for real time to pass
    // (step_at sleeps a little at each of their steps): that thread runs
    // freely and comes back at its next call. They get twice the limit before
    // the step limit is judged.
    if (!any_free || step_ >= options_.max_steps * 2) {
      abort_locked(Outcome::kHang, describe_step_limit(runnable));
      return;
    }
  }
  bool self_runnable = threads_[self].state == State::kRunnable;
  if (yield && self_runnable && runnable.size() > 1) {
    // Stepping aside: the others are the candidates, and choosing one of them
    // is what the caller asked for, not a preemption.
    runnable.erase(std::find(runnable.begin(), runnable.end(), self));
    self_runnable = false;
    // Nor does the turn go to another poller while a thread that does work
    // can run: two pollers handing the turn to each other would starve the
    // thread both wait for.
    auto working = std::find_if(runnable.begin(), runnable.end(), [&](int t) { return polling_[t] == 0; });
    if (options_.poll_aware && working != runnable.end())
      runnable.erase(std::remove_if(runnable.begin(), runnable.end(), [&](int t) { return polling_[t] != 0; }),
                     runnable.end());
  }
  ChoiceContext ctx;
  ctx.step = step_;
  ctx.requester = self;
  ctx.requester_runnable = self_runnable;
  ctx.runnable = &runnable;
  ctx.pending = &pending_;
  ctx.footprints = &footprints_;
  ctx.let_go = let_go;
  ctx.requester_yielded = options_.poll_aware && yield && threads_[self].state == State::kRunnable;
  ctx.polling = options_.poll_aware ? &polling_ : nullptr;
  ctx.waiting_since = &waiting_since_;
  ctx.fair_steps = options_.fair_steps;
  std::string why;
  int next = strategy_->choose(ctx, &why);
  if (next < 0) {
    abort_locked(Outcome::kDivergence, why);
    return;
  }
  waiting_since_[next] = -1;
  DecisionRec d;
  d.thread = next;
  d.requester = self;
  d.point = pending_[next];
  d.object = footprints_[next].object;
  d.write = footprints_[next].write;
  d.preemption = self_runnable && next != self;
  d.requester_runnable = self_runnable;
  d.let_go = let_go;
  // Most steps see the same candidates as the step before: share its copy.
  const DecisionRec* prev = decisions_.empty() ? nullptr : &decisions_.back();
  if (prev != nullptr && prev->runnable_size == runnable.size() &&
      std::equal(runnable.begin(), runnable.end(), runnable_pool_.begin() + prev->runnable_at)) {
    d.runnable_at = prev->runnable_at;
  } else {
    d.runnable_at = static_cast<uint32_t>(runnable_pool_.size());
    runnable_pool_.insert(runnable_pool_.end(), runnable.begin(), runnable.end());
  }
  d.runnable_size = static_cast<uint32_t>(runnable.size());
  if (d.preemption) ++preemptions_;
  if (options_.on_decision) {
    DecisionView v;
    v.step = step_;
    v.thread = d.thread;
    v.point = d.point;
    v.preemption = d.preemption;
    v.requester = d.requester;
    v.requester_runnable = d.requester_runnable;
    v.runnable = runnable.data();
    v.runnable_size = runnable.size();
    v.object = d.object;
    v.write = d.write;
    v.let_go = d.let_go;
    options_.on_decision(v);
  }
  decisions_.push_back(d);
  ++step_;
  advance();
  if (next != self) {
    current_.store(next, std::memory_order_seq_cst);
    signal(next);
  }
}

void Scheduler::rejoin(Lock& lk, int self, const char* where) {
  auto& me = threads_[self];
  // A loop: the watchdog may let this thread go again before it wakes.
  while (me.state == State::kFree && !aborted_) {
    me.state = State::kRunnable;
    --free_;
    add_event(self, "rejoin", where ? where : "");
    if (current_ < 0) {
      current_ = self;  // nobody runs: the one that comes back does
      return;
    }
    pending_[self] = where;
    wait_turn(lk, self);
    lk.lock();
  }
}

bool Scheduler::wait_turn(Lock& lk, int self) {
  // Under lk nobody can signal (every signal is sent under it): the check is
  // exact, and a signal comes after arm().
  if (current_.load(std::memory_order_relaxed) == self || aborted_.load(std::memory_order_relaxed)) {
    lk.unlock();
    return true;
  }
  Handoff& turn = threads_[self].turn;
  turn.arm();
  lk.unlock();
  for (;;) {
    turn.wait();
    if (current_.load(std::memory_order_seq_cst) == self || aborted_.load(std::memory_order_seq_cst)) return true;
    // A signal whose turn has passed already: the watchdog let this thread go
    // after it was picked and before it woke (a loaded machine is slow to
    // wake a thread). It is free now: it runs on and rejoins at its next
    // call. Waiting again for a turn nobody would give a free thread hung
    // the trial with no thread running. Checked under the lock, under which
    // every signal is sent, so arming again cannot miss one.
    lk.lock();
    if (current_.load(std::memory_order_relaxed) == self || aborted_.load(std::memory_order_relaxed)) {
      lk.unlock();
      return true;
    }
    if (threads_[self].state == State::kFree) {
      lk.unlock();
      return false;
    }
    turn.arm();
    lk.unlock();
  }
}

void Scheduler::on_point(const char* name) { on_access(name, nullptr, Access::kWrite); }

void Scheduler::on_access(const char* name, const void* object, Access access) {
  step_at(name, object, access == Access::kWrite, "point", /*yield=*/false);
}

// A yield names no object: what follows may touch anything.
void Scheduler::on_yield(const char* name) { step_at(name, nullptr, true, "yield", /*yield=*/true); }

void Scheduler::enter_step(Lock& lk, int me, const char* name, bool polls) {
  if (aborted_) return throw_aborted(lk);
  if (threads_[me].state == State::kFree) {  // rare: checked here, so a kept step makes no call for it
    rejoin(lk, me, name);
    if (aborted_) return throw_aborted(lk);
  }
  if (polls && free_ > 0) {
    // A thread that was let go runs freely, in real time: a poller that waits
    // for it lets real time pass, or it would spin through the step limit
    // before the free thread has done anything.
    lk.unlock();
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    lk.lock();
    if (aborted_) return throw_aborted(lk);
  }
}

void Scheduler::on_sleep(const char* name, int64_t ns) {
  if (ns <= 0) return on_yield(name);
  int me = self();
  Lock lk(mu_);
  enter_step(lk, me, name, /*polls=*/true);
  if (aborted_) return;  // unwinding already: throw_aborted returned
  pending_[me] = name;
  footprints_[me] = Footprint{};
  polling_[me] = 1;  // a thread that sleeps to wait polls, as one that yields does
  threads_[me].state = State::kSleeping;
  threads_[me].wake_ns = now_locked() + ns;
  add_event(me, "sleep", name);
  reschedule(lk, me);
  if (!wait_turn(lk, me)) return;
  if (aborted_) {
    lk.lock();
    return throw_aborted(lk);
  }
}

void Scheduler::step_at(const char* name, const void* object, bool write, const char* kind, bool yield) {
  int me = self();
  Lock lk(mu_);
  enter_step(lk, me, name, /*polls=*/yield);
  if (aborted_) return;  // unwinding already: throw_aborted returned
  pending_[me] = name;
  footprints_[me] = footprint_of(object, write);
  polling_[me] = yield ? 1 : 0;
  add_event(me, kind, name);
  reschedule(lk, me, yield);
  if (!wait_turn(lk, me)) return;  // let go before it woke: it runs freely
  if (aborted_) {
    lk.lock();
    return throw_aborted(lk);
  }
}

bool Scheduler::let_go(int thread, const std::string& why) {
  Lock lk(mu_);
  if (aborted_ || finished_ || thread < 0 || current_ != thread) return false;
  if (threads_[thread].state != State::kRunnable) return false;
  bool other = false;
  for (size_t i = 0; i < threads_.size(); ++i)
    other = other || (static_cast<int>(i) != thread && threads_[i].state == State::kRunnable);
  if (!other) return false;  // nobody else could run: letting go changes nothing
  threads_[thread].state = State::kFree;
  ++free_;
  pending_[thread] = "racelab.let_go";
  add_event(thread, "let_go", std::string(why));
  reschedule(lk, thread, /*yield=*/false, /*let_go=*/true);
  return true;
}

void Scheduler::step_out(const char* why) {
  const int me = self();
  Lock lk(mu_);
  // Not running (out already, or the trial is over): nothing to hand over.
  if (aborted_ || finished_ || me < 0 || current_ != me || threads_[me].state != State::kRunnable) return;
  // As let_go, but also when nobody else can run now: the thread must not
  // hold the turn while it waits in the OS (a sleeper still wakes by a jump;
  // a timed wait's deadline waits for the thread to come back).
  threads_[me].state = State::kFree;
  ++free_;
  pending_[me] = "racelab.step_out";
  add_event(me, "let_go", fmt::format("steps out: {}", why ? why : "a wait outside the schedule"));
  reschedule(lk, me, /*yield=*/false, /*let_go=*/true);
}

void Scheduler::interrupt(int thread) {
  std::lock_guard<std::mutex> lk(mu_);
  if (aborted_ || thread < 0 || static_cast<size_t>(thread) >= threads_.size()) return;
  ManagedThread& t = threads_[thread];
  if (t.state != State::kBlocked && t.state != State::kJoining && t.state != State::kSleeping) return;
  t.state = State::kRunnable;
  t.blocked_on = nullptr;
  t.join_target = -1;
  t.deadline_ns = -1;  // a timed wait interrupted returns as woken, as a spurious wake-up does
  add_event(self(), "interrupt", fmt::format("thread {}", thread));
}

bool Scheduler::is_free(int thread) const {
  std::lock_guard<std::mutex> lk(mu_);
  return thread >= 0 && static_cast<size_t>(thread) < threads_.size() && threads_[thread].state == State::kFree;
}

int Scheduler::current() const { return current_.load(std::memory_order_seq_cst); }

int Scheduler::on_thread_create_touching(Touches first_step) {
  std::lock_guard<std::mutex> lk(mu_);
  threads_.emplace_back();
  const int id = static_cast<int>(threads_.size()) - 1;
  pending_.push_back("thread.start");
  polling_.push_back(0);
  waiting_since_.push_back(-1);
  // The creation orders the child's first step after the creator's.
  touch_current(self(), lifecycle_object(id));
  footprints_.push_back(first_step == Touches::kNothingShared ? Footprint{lifecycle_object(id), true} : Footprint{});
  // Runnable at once: the handoff flag (current_) makes it irrelevant whether
  // the OS thread has physically reached on_thread_start when it is chosen.
  return id;
}

void Scheduler::on_thread_start(int id) {
  tl_scheduler = this;
  tl_id = id;
  Lock lk(mu_);
  add_event(id, "start", "thread.start");
  // A thread the OS started late may have been let go before it got here.
  if (threads_[id].state == State::kFree)
    rejoin(lk, id, "thread.start");
  else
    wait_turn(lk, id);
  if (lk.owns_lock()) lk.unlock();
  if (aborted_) {
    lk.lock();
    std::string why = abort_detail_;
    lk.unlock();
    throw TrialAborted(why);  // inside racelab::Thread's try
  }
}

void Scheduler::on_thread_end(int id) {
  Lock lk(mu_);
  if (!aborted_) rejoin(lk, id, "thread.end");
  auto& me = threads_[id];
  me.state = State::kEnded;
  add_event(id, "end", "thread.end");
  for (auto& t : threads_)
    if (t.state == State::kJoining && t.join_target == id) {
      t.state = State::kRunnable;
      t.deadline_ns = -1;  // joined, not timed out
    }
  tl_scheduler = nullptr;
  tl_id = -1;
  if (aborted_) {
    bool all_ended = true;
    for (auto& t : threads_) all_ended = all_ended && t.state == State::kEnded;
    finished_ = all_ended;
    state_cv_.notify_all();
    return;
  }
  touch_current(id, lifecycle_object(id));  // its last step: what a join waits for
  pending_[id] = "thread.end";
  footprints_[id] = Footprint{};
  polling_[id] = 0;
  reschedule(lk, id);  // never waits: this thread is gone
}

void Scheduler::on_join_touching(int id, Touches then) {
  int me = self();
  Lock lk(mu_);
  if (!aborted_) rejoin(lk, me, "thread.join");
  // Ordered after the joined thread's last step, so after all it did; the
  // step goes on past the join, so unless the caller said what it touches
  // there, it is dependent on everything.
  if (!aborted_ && threads_[id].state == State::kEnded)
    touch_current(me, then == Touches::kNothingShared ? lifecycle_object(id) : -1);
  if (!aborted_ && threads_[id].state != State::kEnded) {
    threads_[me].state = State::kJoining;
    threads_[me].join_target = id;
    polling_[me] = 0;
    pending_[me] = "thread.join";
    footprints_[me] = then == Touches::kNothingShared ? Footprint{lifecycle_object(id), true} : Footprint{};
    add_event(me, "join", fmt::format("thread {}", id));
    reschedule(lk, me);
    wait_turn(lk, me);
    lk.lock();
  }
  // Never throws: join() runs in racelab::Thread's destructor. After an abort
  // the child is unwinding freely; wait until it has really ended.
  if (aborted_) state_cv_.wait(lk, [&] { return threads_[id].state == State::kEnded; });
}

void Scheduler::on_block(const void* resource, const char* what) {
  int me = self();
  Lock lk(mu_);
  if (aborted_) return throw_aborted(lk);
  rejoin(lk, me, what);
  if (aborted_) return throw_aborted(lk);
  auto& t = threads_[me];
  t.state = State::kBlocked;
  t.blocked_on = resource;
  polling_[me] = 0;
  names_[resource] = what;
  pending_[me] = what;
  footprints_[me] = footprint_of(resource, true);
  add_event(me, "block", what);
  reschedule(lk, me);
  wait_turn(lk, me);
  if (aborted_) {
    lk.lock();
    return throw_aborted(lk);
  }
}

bool Scheduler::wait_until(Lock& lk, int self, int64_t deadline_ns) {
  ManagedThread& t = threads_[self];
  t.deadline_ns = deadline_ns;
  t.wait_began_ns = now_locked();
  t.timed_out = false;
  reschedule(lk, self);
  wait_turn(lk, self);
  lk.lock();
  if (aborted_) {
    t.deadline_ns = -1;
    throw_aborted(lk);
    return false;
  }
  const bool timed_out = t.timed_out;
  t.timed_out = false;
  t.deadline_ns = -1;
  return !timed_out;
}

bool Scheduler::enter_wait(Lock& lk, int me, const char* what) {
  if (aborted_) {
    throw_aborted(lk);
    return false;
  }
  rejoin(lk, me, what);
  if (aborted_) {
    throw_aborted(lk);
    return false;
  }
  return true;
}

bool Scheduler::on_block_until(const void* resource, const char* what, int64_t deadline_ns) {
  int me = self();
  {
    Lock lk(mu_);
    if (!enter_wait(lk, me, what)) return false;
    if (deadline_ns > now_locked()) {
      auto& t = threads_[me];
      t.state = State::kBlocked;
      t.blocked_on = resource;
      polling_[me] = 0;
      names_[resource] = what;
      pending_[me] = what;
      footprints_[me] = footprint_of(resource, true);
      add_event(me, "block", what);
      const bool woken = wait_until(lk, me, deadline_ns);
      return woken;
    }
  }
  // A timeout of zero (or one already past): a try that steps aside, as a
  // poll does, so a loop of zero-timeout waits lets the others run.
  on_yield(what);
  return false;
}

bool Scheduler::on_join_until(int id, const char* what, int64_t deadline_ns) {
  int me = self();
  {
    Lock lk(mu_);
    if (!enter_wait(lk, me, what)) return false;
    if (id < 0 || static_cast<size_t>(id) >= threads_.size() || threads_[id].state == State::kEnded) {
      touch_current(me, -1);
      return true;
    }
    if (deadline_ns > now_locked()) {
      threads_[me].state = State::kJoining;
      threads_[me].join_target = id;
      polling_[me] = 0;
      pending_[me] = what;
      footprints_[me] = Footprint{};
      add_event(me, "join", fmt::format("thread {} ({})", id, what));
      return wait_until(lk, me, deadline_ns);
    }
  }
  on_yield(what);
  Lock lk(mu_);
  return threads_[id].state == State::kEnded;
}

void Scheduler::on_release(const void* resource) {
  int me = self();
  Lock lk(mu_);
  if (aborted_) {
    state_cv_.notify_all();
    return;
  }
  if (me >= 0) rejoin(lk, me, name_of(resource));
  if (aborted_) return;
  // Releasing enables the threads blocked on it: the step writes the resource.
  if (me >= 0) touch_current(me, footprint_of(resource, true).object);
  for (auto& t : threads_) {
    if (t.state == State::kBlocked && t.blocked_on == resource) {
      t.state = State::kRunnable;
      t.blocked_on = nullptr;
      t.deadline_ns = -1;  // woken, not timed out
    }
  }
  add_event(me, "release", name_of(resource));
}

void Scheduler::on_acquire(const void* resource, const char* what) {
  int me = self();
  std::lock_guard<std::mutex> lk(mu_);
  names_[resource] = what;
  if (!aborted_) add_event(me, "acquire", what);
}

std::vector<Event> Scheduler::copy_events() const {
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<Event> out;
  out.reserve(events_.size());
  for (const EventRec& e : events_) out.push_back(expand(e));
  return out;
}

bool Scheduler::wait_finished(double seconds) {
  Lock lk(mu_);
  return state_cv_.wait_for(lk, std::chrono::duration<double>(seconds), [&] { return finished_; });
}

}  // namespace racelab
