// The `trainer` workload: a short, real drafter-training run as one trial.
//
// input.threads drafter worker threads (plus the producer) train tiny drafters
// for a few steps each on the synthetic language, cycling through the knobs'
// sequence lengths and block sizes so attention recompiles mid-run, under the
// trial's mitigation. The target is freshly initialised (not trained): the
// trial is about the compile races, and training it would dominate the trial.
// Reports worker/producer exceptions as errors, the compile layer's eager
// fallbacks as silent_fallbacks, and steps/s, loss and compiles as metrics.
//
// isolate_process runs each drafter in a worker process of its own. Each is a
// racelab worker (engine/supervisor.h) running this workload with knob `rank`
// set: one drafter, free-running. This process never forks one itself:
// LibTorch 2.x refuses autograd in a child forked after its parent ran a
// backward pass ("Unable to handle autograd's threading in combination with
// fork-based multiprocessing"), and the other mitigations' trials ran backward
// passes here. The ranks are forked by the zygote (engine/zygote.h), a process
// that loaded the binary and ran nothing, so no autograd; where it cannot
// fork, they are spawned, as PyTorch users isolate with the spawn start method.
//
// The rank processes are kept across trials, as a real job keeps its rank
// processes for its whole run (rank_pool below), and started before the
// trial's clock (the workload's prepare, racelab/workload.h): starting one
// costs a fork and its first page faults (a LibTorch load, about a second,
// where it is spawned), which is racelab's start-up, not the isolation's cost.
// Paid per trial it was 7.9x isolate_thread's trial; paid in the first trial
// of a shard it still swung the ratio from 1.3x to 2.2x. What stays in the
// trial is what isolation costs: every rank builds its own corpus, target and
// drafter in its own address space and reports through a pipe. Metrics say
// what ran: rank_processes_started (before this trial), rank_start_seconds
// (the time that took, outside the trial's), rank_processes_started_in_trial
// (inside it: one that prepare could not start, or that died since),
// rank_processes_started_by ("zygote fork", or "spawn (why)") and
// rank_processes_reused.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compile/attention_kernel.h"
#include "engine/outcome.h"
#include "engine/supervisor.h"
#include "engine/trial.h"
#include "racelab/controller.h"
#include "racelab/workload.h"
#include "trainer/pipeline/drafter_pipeline.h"
#include "trainer/train/limits.h"
#include "trainer/train/run.h"
#include "trainer/util/threads.h"

namespace {

using nlohmann::json;

// Every knob the workload accepts, with its default: the one list (racelab
// list and the scenario validator show it; make_setup reads it).
const json& knob_defaults() {
  static const json defaults = {{"steps", 3},
                                {"batch", 2},
                                {"seq_lens", {16, 24}},
                                {"block_sizes", {2, 4}},
                                {"anchors", 3},
                                {"d_model", 32},
                                {"layers", 1},
                                {"heads", 2},
                                {"drafter_layers", 1},
                                {"queue_depth", 1},
                                {"corpus_tokens", 4096},
                                {"freeze", false},
                                // -1: every drafter in this process. r >= 0: drafter r alone, single-threaded
                                // (how isolate_process runs each rank in a worker process of its own).
                                {"rank", -1}};
  return defaults;
}

// A knob of the trial, or its default when the trial does not set it.
template <class T>
T knob(const json& knobs, const char* name) {
  return (knobs.contains(name) ? knobs.at(name) : knob_defaults().at(name)).get<T>();
}

struct Setup {
  racelab::trainer::data::Corpus corpus;
  std::shared_ptr<racelab::trainer::NativeTarget> target;
  racelab::trainer::DrafterConfig dcfg;
  racelab::trainer::DraftRunConfig cfg;
  bool freeze = false;
};

Setup make_setup(const racelab::TrialInput& in) {
  const json& k = in.knobs;
  Setup s;
  racelab::trainer::data::SyntheticSpec spec;
  spec.tokens = knob<int64_t>(k, "corpus_tokens");
  spec.seed = 1234 + in.seed;
  s.corpus = racelab::trainer::data::make_synthetic_corpus(spec);
  racelab::trainer::TargetConfig tc;
  tc.vocab_size = s.corpus.vocab_size;
  tc.d_model = knob<int64_t>(k, "d_model");
  tc.layers = knob<int64_t>(k, "layers");
  tc.heads = knob<int64_t>(k, "heads");
  tc.max_len = 64;
  s.target = std::make_shared<racelab::trainer::NativeTarget>(tc, in.seed + 7);
  s.target->params().freeze();
  s.dcfg.layers = knob<int64_t>(k, "drafter_layers");
  s.dcfg.heads = tc.heads;
  s.cfg.steps = knob<int64_t>(k, "steps");
  s.cfg.batch = knob<int64_t>(k, "batch");
  s.cfg.seq_lens = knob<std::vector<int64_t>>(k, "seq_lens");
  s.cfg.block_sizes = knob<std::vector<int64_t>>(k, "block_sizes");
  s.cfg.anchors = knob<int64_t>(k, "anchors");
  s.cfg.queue_depth = knob<int64_t>(k, "queue_depth");
  s.cfg.warmup = 1;
  s.cfg.seed = in.seed;
  s.freeze = knob<bool>(k, "freeze");
  return s;
}

// The knob values the trainer workload can run with (racelab::Workload::
// check_knobs): each knob's range, then the trainer's own rules for the
// combination (heads divide d_model, sequences fit the blocks).
void check_knobs(const json& k) {
  namespace limits = racelab::trainer::limits;
  auto in_range = [&k](const char* name, const limits::Range& r) { racelab::int_knob(k, name, r.min, r.max); };
  in_range("steps", limits::kSteps);
  in_range("batch", limits::kBatch);
  in_range("anchors", limits::kAnchors);
  in_range("d_model", limits::kDModel);
  in_range("layers", limits::kLayers);
  in_range("heads", limits::kHeads);
  in_range("drafter_layers", limits::kDrafterLayers);
  in_range("queue_depth", limits::kQueueDepth);
  in_range("corpus_tokens", limits::kCorpusTokens);
  // -1: every drafter; else one rank of at most kWorkers.
  racelab::int_knob(k, "rank", -1, limits::kWorkers.max - 1);
  for (const char* list : {"seq_lens", "block_sizes"}) {
    const json& v = k.at(list);
    bool ok = v.is_array() && !v.empty();
    for (const auto& x : v) ok = ok && x.is_number_integer() && x.get<int64_t>() >= 1 && x.get<int64_t>() <= 64;
    if (!ok) throw racelab::KnobError(list, v.dump(), "a non-empty array of integers from 1 to 64");
  }
  racelab::trainer::TargetConfig tc;
  tc.vocab_size = 2;
  tc.d_model = k.at("d_model").get<int64_t>();
  tc.layers = k.at("layers").get<int64_t>();
  tc.heads = k.at("heads").get<int64_t>();
  tc.max_len = 64;
  racelab::trainer::DrafterConfig dcfg;
  racelab::trainer::DraftRunConfig cfg;
  cfg.steps = k.at("steps").get<int64_t>();
  cfg.batch = k.at("batch").get<int64_t>();
  cfg.anchors = k.at("anchors").get<int64_t>();
  cfg.seq_lens = k.at("seq_lens").get<std::vector<int64_t>>();
  cfg.block_sizes = k.at("block_sizes").get<std::vector<int64_t>>();
  try {
    tc.validate();
    cfg.validate(tc.max_len);
    for (auto b : cfg.block_sizes)
      if (b > dcfg.max_block) throw std::invalid_argument(fmt::format("block size {} exceeds {}", b, dcfg.max_block));
  } catch (const std::invalid_argument& e) {
    throw racelab::KnobError("", fmt::format("d_model {}, heads {}, seq_lens {}, block_sizes {}", tc.d_model, tc.heads,
                                             k.at("seq_lens").dump(), k.at("block_sizes").dump()),
                             std::string("knobs the trainer accepts: ") + e.what());
  }
}

double mean_last_loss(racelab::trainer::DrafterPipeline& p) {
  double sum = 0;
  int n = 0;
  for (auto& w : p.workers())
    if (!w.losses.empty()) sum += w.losses.back(), ++n;
  return n ? sum / n : 0.0;
}

// Drafter `rank` alone in this process, single-threaded: the body of one
// isolate_process worker. Training seconds exclude the setup, as in run_trial.
racelab::Observation run_rank(int64_t rank, Setup& s) {
  racelab::Observation obs;
  racelab::trainer::DrafterPipeline p(s.target, s.corpus, s.dcfg, s.cfg, {rank});
  racelab::trainer::DraftRunHooks hooks;
  hooks.single_thread = true;  // nothing inside the process runs attention concurrently
  auto st = p.run(hooks);
  const auto as = racelab::compile::attention_stats();
  obs.errors = st.errors;
  obs.silent_fallbacks = as.fallbacks;
  obs.metrics = {{"steps", st.steps_done}, {"seconds", st.seconds}, {"loss", mean_last_loss(p)},
                 {"compiles", as.compiles}, {"fallbacks", as.fallbacks}};
  return obs;
}

// One persistent worker process for one rank. Its Supervisor is started, run
// and stopped on one long-lived thread: a worker asks for SIGKILL when the
// thread that spawned it exits (PR_SET_PDEATHSIG is per thread), so a worker
// started from a per-trial thread would die with that thread. It lives as long
// as this process (the trial's own worker: when that dies, so do its ranks),
// and ends its worker after kIdle without a trial, so a campaign that has moved
// on to other cells does not keep eight LibTorch processes' memory.
class RankProcess {
 public:
  struct Reply {
    racelab::TrialResult result;
    std::string failure;     // the worker could not be started
    bool fresh = false;      // a worker process was started (for this trial, or by start())
    std::string started_by;  // how: "zygote fork" or "spawn (why)" (engine/supervisor.h)
  };

  RankProcess() : thread_([this] { loop(); }) { thread_.detach(); }

  // Starts the rank's worker process if none runs, and warms a fresh one:
  // it runs `spec` once, its result dropped. A forked process's first run
  // pays its first touch of LibTorch's pages and lazy set-up (on this VM a
  // page fault costs 10-16 us: its training ran 1.4-5.9x the next run's), which a
  // real job pays once at its start, as isolate_thread's trial worker paid
  // it in its own first trial; a kept rank process, like that worker, has.
  Reply start(const racelab::TrialSpec& spec) { return ask({spec, true}); }
  // Runs one trial in the rank's worker process, starting one if none runs.
  Reply run(const racelab::TrialSpec& spec) { return ask({spec, false}); }

 private:
  static constexpr std::chrono::seconds kIdle{60};

  struct Job {
    racelab::TrialSpec spec;
    bool start_only;  // start() rather than run()
  };

  Reply ask(Job job) {
    std::unique_lock<std::mutex> lock(mu_);
    job_ = std::move(job);
    reply_.reset();
    cv_.notify_all();
    cv_.wait(lock, [&] { return reply_.has_value(); });
    Reply r = std::move(*reply_);
    reply_.reset();
    return r;
  }

  void loop() {
    racelab::SupervisorOptions opt;
    opt.pass_through_output = false;  // its trial markers are not ours
    opt.fork_from_zygote = true;      // forked before any autograd ran; spawned where that fails
    racelab::Supervisor sup(opt);
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (!cv_.wait_for(lock, kIdle, [&] { return job_.has_value(); })) {
        lock.unlock();
        sup.stop();  // idle: end the worker; the next trial starts a fresh one
        lock.lock();
        continue;
      }
      Job job = std::move(*job_);
      job_.reset();
      lock.unlock();
      Reply r;
      const int before = sup.workers_started();
      try {
        if (!job.start_only)
          r.result = sup.run(job.spec, 600);
        else if (sup.ensure_started())
          (void)sup.run(job.spec, 600);  // the warm-up: its result is not the trial's
      } catch (const std::exception& e) {
        r.failure = e.what();
      }
      r.fresh = sup.workers_started() != before;
      r.started_by = sup.started_by();
      lock.lock();
      reply_ = std::move(r);
      cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Job> job_;
  std::optional<Reply> reply_;
  std::thread thread_;
};

// The rank processes of this process, grown to the largest thread count asked
// for. Never destroyed: its threads end with the process (and their workers
// with them, by the parent-death signal); joining them at exit would wait on
// a worker.
std::vector<std::unique_ptr<RankProcess>>& rank_pool(size_t at_least) {
  static auto* pool = new std::vector<std::unique_ptr<RankProcess>>();
  while (pool->size() < at_least) pool->push_back(std::make_unique<RankProcess>());
  return *pool;
}

// `size` of the pool's processes at once, each rank's call on a thread of its
// own; their replies in rank order.
template <class Call>
std::vector<RankProcess::Reply> on_each_rank(size_t size, Call call) {
  auto& pool = rank_pool(size);
  std::vector<RankProcess::Reply> replies(size);
  std::vector<std::thread> ranks;
  for (size_t r = 0; r < size; ++r) ranks.emplace_back([&, r] { replies[r] = call(*pool[r], static_cast<int>(r)); });
  for (auto& t : ranks) t.join();
  return replies;
}

// Rank r's part of an isolate_process trial: drafter r alone, free-running.
racelab::TrialSpec rank_spec(const racelab::TrialInput& in, int r) {
  racelab::TrialSpec spec;
  spec.workload = "trainer";
  spec.mitigation = "isolate_process";
  spec.knobs = in.knobs;
  spec.knobs["rank"] = r;
  spec.threads = 1;
  spec.seed = in.seed;
  spec.strategy_name = "os";
  spec.strategy = {{"kind", "free"}};
  spec.watchdog_s = 300;
  spec.record_events = false;
  return spec;
}

// What the last prepare did, for the trial that follows it to report (trials
// in one process run one after another).
struct PreparedRanks {
  std::vector<bool> started;  // per rank: its process was started here
  double seconds = 0;
  nlohmann::json started_by = nlohmann::json::array();
};
PreparedRanks& prepared_ranks() {
  static PreparedRanks p;
  return p;
}

// Adds how a freshly started rank process was started to `started_by`, once.
void note_started_by(const RankProcess::Reply& reply, json* started_by) {
  if (reply.fresh && std::find(started_by->begin(), started_by->end(), reply.started_by) == started_by->end())
    started_by->push_back(reply.started_by);
}

// The workload's prepare: an isolate_process trial's rank processes, started
// and warmed (RankProcess::start) before the trial's clock. A start that
// fails is left to the trial, which tries again and reports it.
void prepare(const racelab::TrialInput& in) {
  PreparedRanks& p = prepared_ranks();
  p = PreparedRanks{};
  if (in.mitigation != "isolate_process" || knob<int64_t>(in.knobs, "rank") >= 0) return;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& reply : on_each_rank(static_cast<size_t>(in.threads),
                                        [&](RankProcess& rp, int r) { return rp.start(rank_spec(in, r)); })) {
    p.started.push_back(reply.fresh);
    note_started_by(reply, &p.started_by);
  }
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One worker process per rank, all at once, from the pool; each trains its
// rank alone (knob `rank`) and reports through the worker protocol. steps/s
// is over the slowest rank's training time; the rest of the trial's wall time
// (setup in each process, the pipes, and starting any process that prepare
// could not) is reported apart as spawn_seconds, since a real job pays the
// start once, not per step.
racelab::Observation run_processes(const racelab::TrialInput& in) {
  racelab::Observation obs;
  const auto t0 = std::chrono::steady_clock::now();
  const auto replies = on_each_rank(static_cast<size_t>(in.threads),
                                    [&](RankProcess& rp, int r) { return rp.run(rank_spec(in, r)); });
  const PreparedRanks& prepared = prepared_ranks();
  int64_t steps = 0, compiles = 0, started = 0, started_in_trial = 0, reused = 0;
  double loss = 0, slowest = 0;
  json started_by = prepared.started_by;
  for (size_t r = 0; r < replies.size(); ++r) {
    const auto& reply = replies[r];
    const bool prepared_here = r < prepared.started.size() && prepared.started[r];
    started += prepared_here ? 1 : 0;
    started_in_trial += reply.fresh ? 1 : 0;  // prepare could not start it, or it died since
    reused += prepared_here || reply.fresh ? 0 : 1;
    note_started_by(reply, &started_by);
    if (!reply.failure.empty()) {
      obs.errors.push_back(fmt::format("worker process {} could not start: {}", r, reply.failure));
      continue;
    }
    const auto& res = reply.result;
    const bool fell_back = res.outcome == racelab::Outcome::kSilentFallback;
    if (racelab::is_failure(res.outcome) && !fell_back)
      obs.errors.push_back(fmt::format("process {}: {}: {}", r, racelab::outcome_name(res.outcome), res.detail));
    const json& m = res.metrics;
    steps += m.value("steps", int64_t{0});
    compiles += m.value("compiles", int64_t{0});
    obs.silent_fallbacks += m.value("fallbacks", int64_t{0});
    loss += m.value("loss", 0.0) / static_cast<double>(replies.size());
    slowest = std::max(slowest, m.value("seconds", 0.0));
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  obs.metrics = {{"steps", steps},
                 {"seconds", slowest},
                 {"steps_per_s", slowest > 0 ? static_cast<double>(steps) / slowest : 0.0},
                 {"spawn_seconds", std::max(0.0, wall - slowest)},
                 {"loss", loss},
                 {"compiles", compiles},
                 {"rank_processes_started", started},
                 {"rank_processes_started_in_trial", started_in_trial},
                 {"rank_start_seconds", prepared.seconds},
                 {"rank_processes_reused", reused},
                 {"rank_processes_started_by", started_by},
                 {"mode", "processes"}};
  return obs;
}

racelab::Observation run_trial(const racelab::TrialInput& in) {
  racelab::trainer::use_single_intra_op_thread();
  const int64_t rank = knob<int64_t>(in.knobs, "rank");
  if (in.mitigation == "isolate_process" && rank < 0) return run_processes(in);
  auto s = make_setup(in);
  racelab::compile::set_attention_mitigation(in.mitigation);
  if (rank >= 0) return run_rank(rank, s);

  racelab::Observation obs;
  std::vector<int64_t> ranks;
  for (int r = 0; r < in.threads; ++r) ranks.push_back(r);
  racelab::trainer::DrafterPipeline p(s.target, s.corpus, s.dcfg, s.cfg, ranks);
  if (in.mitigation == "precompile") {
    try {
      racelab::compile::precompile_attention(
          [&] { racelab::trainer::warm_declared_shapes(*s.target, s.dcfg, s.corpus, s.cfg, nullptr); }, s.freeze);
    } catch (const std::exception& e) {
      obs.errors.push_back(std::string("precompile: ") + e.what());
      return obs;
    }
  }
  auto st = p.run({});
  auto as = racelab::compile::attention_stats();
  obs.errors = st.errors;
  obs.silent_fallbacks = as.fallbacks;
  obs.metrics = {{"steps", st.steps_done},      {"seconds", st.seconds},         {"steps_per_s", st.steps_per_s},
                 {"loss", mean_last_loss(p)},   {"compiles", as.compiles},       {"cache_hits", as.cache_hits},
                 {"attention_calls", as.calls}, {"compile_seconds", as.compile_seconds}, {"mode", "threads"}};
  return obs;
}

racelab::Workload trainer_workload() {
  racelab::Workload w{
      "trainer",
      "The full drafter trainer: a producer thread and N drafter worker threads training DFlash block drafters for a "
      "few steps, attention through the compile layer, sequence lengths and block sizes cycling (recompiles)",
      knob_defaults(),
      racelab::compile::mitigation_names(),
      false,
      [] { racelab::compile::reset_attention(); },
      &run_trial,
      &check_knobs,
  };
  w.prepare = &prepare;
  return w;
}

racelab::WorkloadRegistrar registrar{trainer_workload()};

}  // namespace
