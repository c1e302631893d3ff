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
// isolate_process forks one child process per drafter (each detached from any
// controller, training its rank alone) and gathers their results over pipes.
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compile/attention_kernel.h"
#include "racelab/controller.h"
#include "racelab/workload.h"
#include "trainer/pipeline/drafter_pipeline.h"
#include "trainer/train/run.h"
#include "trainer/util/threads.h"
#include "trainer/util/worker_processes.h"

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
                                {"freeze", false}};
  return defaults;
}

// A knob of the trial, or its default when the trial does not set it.
template <class T>
T knob(const json& knobs, const char* name) {
  return (knobs.contains(name) ? knobs.at(name) : knob_defaults().at(name)).get<T>();
}

struct Setup {
  trainer::data::Corpus corpus;
  std::shared_ptr<trainer::NativeTarget> target;
  trainer::DrafterConfig dcfg;
  trainer::DraftRunConfig cfg;
  bool freeze = false;
};

Setup make_setup(const racelab::TrialInput& in) {
  const json& k = in.knobs;
  Setup s;
  trainer::data::SyntheticSpec spec;
  spec.tokens = knob<int64_t>(k, "corpus_tokens");
  spec.seed = 1234 + in.seed;
  s.corpus = trainer::data::make_synthetic_corpus(spec);
  trainer::TargetConfig tc;
  tc.vocab_size = s.corpus.vocab_size;
  tc.d_model = knob<int64_t>(k, "d_model");
  tc.layers = knob<int64_t>(k, "layers");
  tc.heads = knob<int64_t>(k, "heads");
  tc.max_len = 64;
  s.target = std::make_shared<trainer::NativeTarget>(tc, in.seed + 7);
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
  racelab::int_knob(k, "steps", 1, 100000);
  racelab::int_knob(k, "batch", 1, 1024);
  racelab::int_knob(k, "anchors", 1, 64);
  racelab::int_knob(k, "d_model", 8, 1024);
  racelab::int_knob(k, "layers", 1, 16);
  racelab::int_knob(k, "heads", 1, 64);
  racelab::int_knob(k, "drafter_layers", 1, 16);
  racelab::int_knob(k, "queue_depth", 1, 1024);
  racelab::int_knob(k, "corpus_tokens", 1024, 10000000);
  for (const char* list : {"seq_lens", "block_sizes"}) {
    const json& v = k.at(list);
    bool ok = v.is_array() && !v.empty();
    for (const auto& x : v) ok = ok && x.is_number_integer() && x.get<int64_t>() >= 1 && x.get<int64_t>() <= 64;
    if (!ok) throw racelab::KnobError(list, v.dump(), "a non-empty array of integers from 1 to 64");
  }
  trainer::TargetConfig tc;
  tc.vocab_size = 2;
  tc.d_model = k.at("d_model").get<int64_t>();
  tc.layers = k.at("layers").get<int64_t>();
  tc.heads = k.at("heads").get<int64_t>();
  tc.max_len = 64;
  trainer::DrafterConfig dcfg;
  trainer::DraftRunConfig cfg;
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

double mean_last_loss(trainer::DrafterPipeline& p) {
  double sum = 0;
  int n = 0;
  for (auto& w : p.workers())
    if (!w.losses.empty()) sum += w.losses.back(), ++n;
  return n ? sum / n : 0.0;
}

// One child per rank; each writes a JSON line to its pipe.
racelab::Observation run_processes(const racelab::TrialInput& in, Setup& s) {
  racelab::Observation obs;
  auto t0 = std::chrono::steady_clock::now();
  const auto exits = trainer::run_worker_processes(in.threads, [&](int r, int out_fd) {
    racelab::detach();  // the child runs free: no scheduler lives in this process
    json out;
    try {
      trainer::compile::reset_attention();
      trainer::DrafterPipeline p(s.target, s.corpus, s.dcfg, s.cfg, {r});
      trainer::DraftRunHooks hooks;
      hooks.single_thread = true;  // nothing inside the process runs attention concurrently
      auto st = p.run(hooks);
      out = {{"errors", st.errors}, {"steps", st.steps_done}, {"loss", mean_last_loss(p)},
             {"fallbacks", trainer::compile::attention_stats().fallbacks},
             {"compiles", trainer::compile::attention_stats().compiles}};
    } catch (const std::exception& e) {
      out = {{"errors", {std::string(e.what())}}};
    }
    const auto text = out.dump();
    (void)!::write(out_fd, text.data(), text.size());
    return 0;
  });
  int64_t steps = 0, compiles = 0;
  double loss = 0;
  for (size_t r = 0; r < exits.size(); ++r) {
    const int status = exits[r].status;
    auto j = json::parse(exits[r].output, nullptr, false);
    if (WIFSIGNALED(status) || j.is_discarded()) {
      obs.errors.push_back(fmt::format("worker process {} died (status {})", r, status));
      continue;
    }
    for (auto& e : j.value("errors", json::array())) obs.errors.push_back(fmt::format("process {}: {}", r, e.get<std::string>()));
    steps += j.value("steps", int64_t{0});
    compiles += j.value("compiles", int64_t{0});
    obs.silent_fallbacks += j.value("fallbacks", int64_t{0});
    loss += j.value("loss", 0.0) / static_cast<double>(exits.size());
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  obs.metrics = {{"steps", steps}, {"seconds", secs}, {"steps_per_s", secs > 0 ? steps / secs : 0.0},
                 {"loss", loss}, {"compiles", compiles}, {"mode", "processes"}};
  return obs;
}

racelab::Observation run_trial(const racelab::TrialInput& in) {
  trainer::use_single_intra_op_thread();
  auto s = make_setup(in);
  trainer::compile::set_attention_mitigation(in.mitigation);
  if (in.mitigation == "isolate_process") return run_processes(in, s);

  racelab::Observation obs;
  std::vector<int64_t> ranks;
  for (int r = 0; r < in.threads; ++r) ranks.push_back(r);
  trainer::DrafterPipeline p(s.target, s.corpus, s.dcfg, s.cfg, ranks);
  if (in.mitigation == "precompile") {
    try {
      trainer::compile::precompile_attention(
          [&] { trainer::warm_declared_shapes(*s.target, s.dcfg, s.corpus, s.cfg, nullptr); }, s.freeze);
    } catch (const std::exception& e) {
      obs.errors.push_back(std::string("precompile: ") + e.what());
      return obs;
    }
  }
  auto st = p.run({});
  auto as = trainer::compile::attention_stats();
  obs.errors = st.errors;
  obs.silent_fallbacks = as.fallbacks;
  obs.metrics = {{"steps", st.steps_done},      {"seconds", st.seconds},         {"steps_per_s", st.steps_per_s},
                 {"loss", mean_last_loss(p)},   {"compiles", as.compiles},       {"cache_hits", as.cache_hits},
                 {"attention_calls", as.calls}, {"compile_seconds", as.compile_seconds}, {"mode", "threads"}};
  return obs;
}

racelab::WorkloadRegistrar registrar{racelab::Workload{
    "trainer",
    "The full drafter trainer: a producer thread and N drafter worker threads training DFlash block drafters for a "
    "few steps, attention through the compile layer, sequence lengths and block sizes cycling (recompiles)",
    knob_defaults(),
    trainer::compile::mitigation_names(),
    false,
    [] { trainer::compile::reset_attention(); },
    &run_trial,
    &check_knobs,
}};

}  // namespace
