// compile/capture_state.cpp -- see capture_state.h. LibTorch-free.
#include "compile/capture_state.h"

#include <unordered_map>

#include "racelab/point.h"
#include "compile/point_names.h"

namespace racelab::compile {
namespace {

std::atomic<uint64_t> g_next_runtime_id{1};
thread_local CaptureRuntime* t_runtime_override = nullptr;

// torch.fx._symbolic_trace itself: its flag is the runtime's.
class RealFlagModule : public FlagModule {
 public:
  explicit RealFlagModule(const CaptureRuntime* rt) : rt_(rt) {}
  bool flag() const override { return rt_->read_flag(); }
  std::string describe() const override { return "torch.fx._symbolic_trace (the real module)"; }

 private:
  const CaptureRuntime* rt_;
};

}  // namespace

// ---- Variants ---------------------------------------------------------------

const std::vector<std::string>& Variants::fields() {
  static const std::vector<std::string> f{"flag_scope", "flag_type", "check", "eager_sets_flag", "cache",
                                          "patch_scope"};
  return f;
}

std::string Variants::accepted(const std::string& field) {
  if (field == "flag_scope" || field == "patch_scope") return "global | thread_local";
  if (field == "flag_type") return "plain | atomic";
  if (field == "check") return "outside_lock | inside_lock";
  if (field == "eager_sets_flag") return "before_lock | after_lock";
  if (field == "cache") return "synchronised | unsynchronised";
  throw std::invalid_argument("unknown compile variant '" + field +
                              "', expected one of flag_scope, flag_type, check, eager_sets_flag, cache, patch_scope");
}

void Variants::set(const std::string& field, const std::string& value) {
  const std::string expected = accepted(field);  // throws for an unknown field
  if (field == "flag_scope" && value == "global") flag_scope = FlagScope::kGlobal;
  else if (field == "flag_scope" && value == "thread_local") flag_scope = FlagScope::kThreadLocal;
  else if (field == "flag_type" && value == "plain") flag_type = FlagType::kPlain;
  else if (field == "flag_type" && value == "atomic") flag_type = FlagType::kAtomic;
  else if (field == "check" && value == "outside_lock") check = CheckPlace::kOutsideLock;
  else if (field == "check" && value == "inside_lock") check = CheckPlace::kInsideLock;
  else if (field == "eager_sets_flag" && value == "before_lock") eager_sets_flag = EagerOrder::kBeforeLock;
  else if (field == "eager_sets_flag" && value == "after_lock") eager_sets_flag = EagerOrder::kAfterLock;
  else if (field == "cache" && value == "synchronised") cache = CacheSync::kSynchronised;
  else if (field == "cache" && value == "unsynchronised") cache = CacheSync::kUnsynchronised;
  else if (field == "patch_scope" && value == "global") patch_scope = PatchScope::kGlobal;
  else if (field == "patch_scope" && value == "thread_local") patch_scope = PatchScope::kThreadLocal;
  else throw std::invalid_argument("compile variant '" + field + "': got '" + value + "', expected " + expected);
}

std::string Variants::get(const std::string& field) const {
  if (field == "flag_scope") return flag_scope == FlagScope::kGlobal ? "global" : "thread_local";
  if (field == "flag_type") return flag_type == FlagType::kPlain ? "plain" : "atomic";
  if (field == "check") return check == CheckPlace::kOutsideLock ? "outside_lock" : "inside_lock";
  if (field == "eager_sets_flag") return eager_sets_flag == EagerOrder::kBeforeLock ? "before_lock" : "after_lock";
  if (field == "cache") return cache == CacheSync::kSynchronised ? "synchronised" : "unsynchronised";
  if (field == "patch_scope") return patch_scope == PatchScope::kGlobal ? "global" : "thread_local";
  throw std::invalid_argument("unknown compile variant '" + field + "'");
}

// ---- errors, recorder, snapshot ----------------------------------------------

NestedCaptureError::NestedCaptureError(const std::string& function)
    : std::runtime_error(
          "Detected that you are using FX to symbolically trace a dynamo-optimized function. This is not "
          "supported at the moment. (racelab: compiled function '" +
          function +
          "' was entered while the process-wide capture flag was set by a capture this thread is not running "
          "-- the cross-thread capture-flag race)") {}

void ModuleCallRecorder::record(const std::string& module) {
  std::lock_guard<std::mutex> lock(mu_);
  calls_.push_back(module);
}

std::vector<std::string> ModuleCallRecorder::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

std::string CaptureSnapshot::diff(const CaptureSnapshot& initial) const {
  std::string out;
  if (flag != initial.flag)
    out += std::string("capture flag is ") + (flag ? "true" : "false") + " after the trial, was " +
           (initial.flag ? "true" : "false");
  if (patch_active != initial.patch_active) {
    if (!out.empty()) out += "; ";
    out += std::string("module-call patch is ") + (patch_active ? "still installed" : "missing") +
           " after the trial";
  }
  return out;
}

// ---- CaptureRuntime ----------------------------------------------------------

struct CaptureRuntime::ThreadState {
  bool flag = false;
  int depth = 0;
  std::shared_ptr<ModuleCallRecorder> patch;
};

CaptureRuntime::CaptureRuntime(Variants variants)
    : variants_(variants),
      id_(g_next_runtime_id++),
      real_module_(std::make_shared<RealFlagModule>(this)),
      installed_module_(real_module_) {}

CaptureRuntime& CaptureRuntime::process() {
  static CaptureRuntime* rt = new CaptureRuntime();  // never destroyed: threads may outlive main
  return *rt;
}

CaptureRuntime::ThreadState& CaptureRuntime::this_thread() const {
  thread_local std::unordered_map<uint64_t, ThreadState> states;
  return states[id_];
}

bool CaptureRuntime::read_flag() const {
  if (variants_.flag_scope == FlagScope::kThreadLocal) return this_thread().flag;
  if (variants_.flag_type == FlagType::kAtomic) return flag_atomic_.load(std::memory_order_seq_cst);
  return flag_plain_;  // unsynchronised on purpose: upstream's flag is a plain global
}

void CaptureRuntime::write_flag(bool value) {
  if (variants_.flag_scope == FlagScope::kThreadLocal) {
    this_thread().flag = value;
  } else if (variants_.flag_type == FlagType::kAtomic) {
    flag_atomic_.store(value, std::memory_order_seq_cst);
  } else {
    flag_plain_ = value;
  }
}

int CaptureRuntime::compiling_depth() const { return this_thread().depth; }

CaptureRuntime::CompilingScope::CompilingScope(CaptureRuntime& rt) : rt_(rt) { ++rt_.this_thread().depth; }
CaptureRuntime::CompilingScope::~CompilingScope() { --rt_.this_thread().depth; }

std::shared_ptr<ModuleCallRecorder> CaptureRuntime::active_patch() const {
  if (variants_.patch_scope == PatchScope::kThreadLocal) return this_thread().patch;
  return std::atomic_load(&patch_);
}

std::shared_ptr<ModuleCallRecorder> CaptureRuntime::install_patch(std::shared_ptr<ModuleCallRecorder> patch) {
  if (variants_.patch_scope == PatchScope::kThreadLocal) return std::exchange(this_thread().patch, std::move(patch));
  auto previous = std::atomic_load(&patch_);
  point(points::kPatchInstall, Use::kNone, Use::kWrite);
  std::atomic_store(&patch_, std::move(patch));
  return previous;
}

void CaptureRuntime::revert_patch(std::shared_ptr<ModuleCallRecorder> previous) {
  if (variants_.patch_scope == PatchScope::kThreadLocal) {
    this_thread().patch = std::move(previous);
    return;
  }
  point(points::kPatchRevert, Use::kNone, Use::kWrite);
  std::atomic_store(&patch_, std::move(previous));
}

void CaptureRuntime::point(const char* name, Use flag, Use patch) const {
  const bool global_flag = variants_.flag_scope == FlagScope::kGlobal && flag != Use::kNone;
  const bool global_patch = variants_.patch_scope == PatchScope::kGlobal && patch != Use::kNone;
  if (!global_flag && !global_patch) return racelab::point(name, racelab::private_object(), racelab::Access::kWrite);
  const bool writes = (global_flag && flag == Use::kWrite) || (global_patch && patch == Use::kWrite);
  racelab::point(name, this, writes ? racelab::Access::kWrite : racelab::Access::kRead);
}

CaptureSnapshot CaptureRuntime::snapshot() const {
  CaptureSnapshot s;
  s.flag = read_flag();
  s.patch_active = active_patch() != nullptr;
  return s;
}

void CaptureRuntime::reset() {
  flag_plain_ = false;
  flag_atomic_.store(false);
  std::atomic_store(&patch_, std::shared_ptr<ModuleCallRecorder>());
  this_thread() = ThreadState{};
  installed_module_ = real_module_;
  predicate_patched_ = false;
  counters_.entry_checks = 0;
  counters_.nested_errors = 0;
  counters_.silent_fallbacks = 0;
  counters_.captures = 0;
  counters_.eager_path_calls = 0;
}

CaptureRuntime& current_runtime() {
  return t_runtime_override != nullptr ? *t_runtime_override : CaptureRuntime::process();
}

ScopedRuntime::ScopedRuntime(CaptureRuntime& rt) : previous_(t_runtime_override) { t_runtime_override = &rt; }
ScopedRuntime::~ScopedRuntime() { t_runtime_override = previous_; }

// ---- EntryCheck --------------------------------------------------------------

EntryCheck::EntryCheck(CaptureRuntime* runtime, bool error_on_nested)
    : runtime_(runtime), error_on_nested_(error_on_nested), globals_(runtime->installed_module()) {}

EntryCheck::Verdict EntryCheck::run(const std::string& function) const {
  // Reads the flag (through the bound module: the runtime's own, or a shim
  // that reads nothing); on an error the step unwinds to the caller's handler.
  runtime_->point(points::kEntryCheck, CaptureRuntime::Use::kRead, CaptureRuntime::Use::kNone);
  runtime_->counters().entry_checks++;
  // is_fx_tracing(): the flag of the module bound at construction, unless the
  // predicate itself was patched to return false.
  const bool tracing = !runtime_->predicate_patched() && globals_->flag();
  if (!tracing || runtime_->compiling_depth() > 0) return Verdict::kCompiled;
  if (error_on_nested_) {
    runtime_->counters().nested_errors++;
    throw NestedCaptureError(function);
  }
  runtime_->counters().silent_fallbacks++;
  return Verdict::kFallback;
}

// ---- the two writers ---------------------------------------------------------

void capture_scope(CaptureRuntime& rt, const std::shared_ptr<ModuleCallRecorder>& recorder,
                   const std::function<void()>& trace) {
  rt.counters().captures++;
  using Use = CaptureRuntime::Use;
  rt.point(points::kCaptureSaveFlag, Use::kRead, Use::kNone);
  const bool saved = rt.read_flag();
  rt.point(points::kCaptureSetFlag, Use::kWrite, Use::kRead);  // sets, then install_patch saves the patch
  rt.write_flag(true);
  auto previous_patch = rt.install_patch(recorder);
  struct Restore {
    CaptureRuntime& rt;
    bool saved;
    std::shared_ptr<ModuleCallRecorder> previous_patch;
    ~Restore() {
      rt.revert_patch(std::move(previous_patch));
      // Restores, then the caller reads its recorder (compile, user_trace).
      rt.point(points::kCaptureRestoreFlag, Use::kWrite, Use::kRead);
      rt.write_flag(saved);
    }
  } restore{rt, saved, std::move(previous_patch)};
  // The trace runs the traced function up to its first point (module.call,
  // a nested compiled call): the tracer's state is the thread's own.
  racelab::point(points::kCaptureTrace, racelab::private_object(), racelab::Access::kWrite);
  trace();
}

void compilation_env(CaptureRuntime& rt, const std::function<void()>& compile, const std::function<void()>& run) {
  rt.counters().eager_path_calls++;
  const bool before = rt.variants().eager_sets_flag == EagerOrder::kBeforeLock;
  bool saved = false;
  auto save_and_clear = [&] {
    rt.point(points::kEagerSaveFlag, CaptureRuntime::Use::kRead, CaptureRuntime::Use::kNone);
    saved = rt.read_flag();
    rt.point(points::kEagerClearFlag, CaptureRuntime::Use::kWrite, CaptureRuntime::Use::kNone);
    rt.write_flag(false);
  };
  auto restore = [&] {
    rt.point(points::kEagerRestoreFlag, CaptureRuntime::Use::kWrite, CaptureRuntime::Use::kNone);
    rt.write_flag(saved);
  };
  if (before) save_and_clear();
  {
    std::unique_lock<racelab::RecursiveMutex> lock(rt.compile_lock());
    if (!before) save_and_clear();
    try {
      compile();
    } catch (...) {
      if (!before) restore();
      lock.unlock();
      if (before) restore();
      throw;
    }
    if (!before) restore();
  }
  if (run) {
    try {
      run();
    } catch (...) {
      if (before) restore();
      throw;
    }
  }
  if (before) restore();
}

void module_call(CaptureRuntime& rt, const std::string& module) {
  // Reads the patch and writes into the recorder it points to (another
  // thread's, when that thread is capturing).
  rt.point(points::kModuleCall, CaptureRuntime::Use::kNone, CaptureRuntime::Use::kWrite);
  if (auto patch = rt.active_patch()) patch->record(module);
}

}  // namespace racelab::compile
