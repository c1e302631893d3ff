#include "trainer/train/run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include "compile/attention_kernel.h"
#include "racelab/atomic_file.h"
#include "racelab/exit_code.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/model/target_file.h"
#include "trainer/util/device.h"
#include "trainer/util/errors.h"
#include "trainer/util/threads.h"
#include "trainer/util/worker_processes.h"
#include "compile/torch_compat.h"

namespace racelab::trainer {
namespace fs = std::filesystem;

std::atomic<bool>& stop_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}

namespace {
extern "C" void on_sigint(int) {
  // Second Ctrl-C: the user insists; leave now (the last checkpoint stays valid).
  if (stop_flag().exchange(true)) _exit(racelab::kExitInterrupted);
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

void install_sigint_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
}

data::Corpus load_corpus(const CorpusOptions& options) {
  if (options.data_file.empty()) return data::make_synthetic_corpus(options.synthetic);
  return data::load_text_corpus(options.data_file);
}

nlohmann::json drafter_identity(Target& target, const data::Corpus& corpus, const DrafterConfig& dcfg,
                                const DraftRunConfig& cfg) {
  return {{"target", target.config().to_json()},
          {"target_fingerprint", fmt::format("{:016x}", target_fingerprint(target))},
          {"corpus_fingerprint", fmt::format("{:016x}", corpus.fingerprint())},
          {"drafter", dcfg.to_json()},
          {"run", cfg.to_json()}};
}

void warm_declared_shapes(Target& target, const DrafterConfig& dcfg, const data::Corpus& corpus,
                          const DraftRunConfig& cfg, const EvalConfig* eval) {
  Drafter scratch(dcfg, target.config(), 0);
  scratch.to(target.device());
  for (size_t s = 0; s < cfg.seq_lens.size() * cfg.block_sizes.size(); ++s) {
    auto batch = make_draft_batch(corpus, cfg, 0, static_cast<int64_t>(s), target.device());
    {
      at::NoGradGuard no_grad;
      batch.taps = target.forward(batch.tokens).taps;
    }
    auto logits = scratch.forward(target, batch.taps,
                                  make_block_tokens(batch.tokens, batch.anchors, batch.block_size, corpus.mask_token),
                                  MaskSpec::blocks(batch.seq_len, batch.anchors, batch.block_size));
    weighted_block_loss(logits, make_block_labels(batch.tokens, batch.anchors, batch.block_size), batch.block_size,
                        dcfg.gamma)
        .loss.backward();
  }
  if (eval != nullptr) {
    at::NoGradGuard no_grad;
    const auto L = target.config().max_len;
    const auto longs = at::TensorOptions().dtype(at::kLong).device(target.device());
    auto tokens = at::full({1, L}, corpus.mask_token, longs);
    auto taps = target.forward(tokens).taps;
    scratch.forward(target, taps, at::full({1, eval->block_size}, corpus.mask_token, longs),
                    MaskSpec::blocks(L, {1}, eval->block_size));
  }
}

namespace {

std::shared_ptr<Target> obtain_target(const TrainOptions& o, c10::Device device, const data::Corpus& corpus,
                                      MetricsLog& metrics, nlohmann::json& summary) {
  const auto path = (fs::path(o.out_dir) / "target.ckpt").string();
  std::string from = o.target_file;
  if (from.empty() && o.resume && fs::exists(path)) from = path;
  if (!from.empty()) {
    nlohmann::json meta;
    auto t = load_target(from, &meta);
    t->to(device);
    if (t->config().vocab_size != corpus.vocab_size)
      throw BadInput(fmt::format("target '{}': vocabulary {} does not match the corpus ({} tokens incl. mask)", from,
                                 t->config().vocab_size, corpus.vocab_size));
    if (meta.contains("corpus_fingerprint") &&
        meta["corpus_fingerprint"] != fmt::format("{:016x}", corpus.fingerprint()))
      std::fprintf(stderr, "warning: target '%s' was trained on a different corpus\n", from.c_str());
    summary["target"] = {{"source", from}, {"kind", t->kind()}, {"config", t->config().to_json()}};
    if (meta.contains("heldout_loss")) summary["target"]["heldout_loss"] = meta["heldout_loss"];
    return t;
  }
  auto cfg = o.target;
  cfg.vocab_size = corpus.vocab_size;
  auto t = std::make_shared<NativeTarget>(cfg, o.target_train.seed);
  t->to(device);  // before train_target's optimizer takes the parameters
  auto r = train_target(*t, corpus, o.target_train, &metrics, o.progress, &stop_flag());
  if (r.interrupted) throw std::runtime_error("interrupted while training the target (nothing saved)");
  t->params().freeze();
  save_target(*t, path,
              {{"corpus", corpus.source},
               {"corpus_fingerprint", fmt::format("{:016x}", corpus.fingerprint())},
               {"steps", r.steps},
               {"train_loss", r.train_loss},
               {"heldout_loss", r.heldout_loss}});
  summary["target"] = {{"source", "trained"}, {"path", "target.ckpt"},       {"config", t->config().to_json()},
                       {"steps", r.steps},   {"seconds", r.seconds}, {"train_loss", r.train_loss},
                       {"heldout_loss", r.heldout_loss}};
  if (o.progress)
    std::printf("target: %lld steps in %.1fs, train loss %.4f, held-out loss %.4f -> %s\n",
                static_cast<long long>(r.steps), r.seconds, r.train_loss, r.heldout_loss, path.c_str());
  return t;
}

// --resume continues a run: its folder and every drafters checkpoint must be
// there (rank-R/drafters.ckpt for `ranks` isolate_process children), each a
// file. Anything else is bad input, never a silent fresh start.
void require_resumable(const std::string& out_dir, int64_t ranks) {
  std::error_code ec;
  if (!fs::is_directory(out_dir, ec))
    throw BadInput(fmt::format("--resume: run directory '{}' does not exist (start without --resume)", out_dir));
  std::vector<fs::path> ckpts;
  if (ranks == 0) ckpts.push_back(fs::path(out_dir) / "drafters.ckpt");
  for (int64_t r = 0; r < ranks; ++r) ckpts.push_back(fs::path(out_dir) / fmt::format("rank-{}", r) / "drafters.ckpt");
  for (const auto& p : ckpts) {
    if (!fs::exists(p, ec))
      throw BadInput(fmt::format("--resume: no checkpoint '{}' (the run it continues saves one; start without --resume)",
                                 p.string()));
    if (!fs::is_regular_file(p, ec))
      throw BadInput(fmt::format("--resume: '{}' is not a checkpoint file", p.string()));
  }
}

// isolate_process: one child process per drafter, each `racelab train ... --worker-rank i`.
DraftRunStats run_children(const TrainOptions& o, const std::string& target_path) {
  DraftRunStats stats;
  auto t0 = std::chrono::steady_clock::now();
  // Every child's command line, built before forking.
  std::vector<std::vector<std::string>> args(static_cast<size_t>(o.workers));
  std::vector<std::vector<char*>> argvs(args.size());
  for (size_t r = 0; r < args.size(); ++r) {
    args[r] = {"racelab"};
    args[r].insert(args[r].end(), o.reexec_args.begin(), o.reexec_args.end());
    auto dir = (fs::path(o.out_dir) / fmt::format("rank-{}", r)).string();
    for (const auto& extra : std::vector<std::string>{"--worker-rank", std::to_string(r), "--target", target_path,
                                                      "--out", dir, "--no-eval", "--quiet"})
      args[r].push_back(extra);
    for (auto& a : args[r]) argvs[r].push_back(a.data());
    argvs[r].push_back(nullptr);
  }
  const auto exits = run_worker_processes(static_cast<int>(o.workers), [&](int rank, int) {
    ::execv("/proc/self/exe", argvs[static_cast<size_t>(rank)].data());
    std::fprintf(stderr, "exec /proc/self/exe failed: %s\n", std::strerror(errno));
    return 127;
  });
  for (size_t r = 0; r < exits.size(); ++r) {
    const int status = exits[r].status;
    auto dir = fs::path(o.out_dir) / fmt::format("rank-{}", r);
    if (WIFSIGNALED(status)) stats.errors.push_back(fmt::format("worker process {} killed by signal {}", r, WTERMSIG(status)));
    else if (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != racelab::kExitInterrupted)
      stats.errors.push_back(fmt::format("worker process {} exited with {} (see {})", r, WEXITSTATUS(status), dir.string()));
    if (fs::exists(dir / "summary.json")) {
      std::ifstream in(dir / "summary.json");
      auto j = nlohmann::json::parse(in, nullptr, false);
      if (!j.is_discarded()) {
        stats.steps_done += j.value("drafters", nlohmann::json::object()).value("steps_done", int64_t{0});
        for (auto& e : j.value("errors", nlohmann::json::array())) stats.errors.push_back(fmt::format("process {}: {}", r, e.get<std::string>()));
        if (j.value("interrupted", false)) stats.interrupted = true;
      }
    }
  }
  stats.seconds = since(t0);
  stats.steps_per_s = stats.seconds > 0 ? static_cast<double>(stats.steps_done) / stats.seconds : 0;
  return stats;
}

}  // namespace

TrainOptions::TrainOptions() {
  // `racelab train`'s sizes, smaller than the model structs' own defaults.
  target.d_model = 64;
  target.layers = 2;
  target.heads = 4;
  target.max_len = 128;
  target_train.steps = 300;
  run.steps = 200;
  eval.new_tokens = 48;
}

TrainSummary run_training(const TrainOptions& o) {
  TrainSummary out;
  auto t0 = std::chrono::steady_clock::now();
  use_single_intra_op_thread();  // the workers are the parallelism; also deterministic
  const auto device = compute_device(o.device);  // std::invalid_argument: a usage error
  const bool child = o.worker_rank >= 0;
  const bool isolate = o.mitigation == "isolate_process" && !child;
  if (o.resume) require_resumable(o.out_dir, isolate ? o.workers : 0);
  fs::create_directories(o.out_dir);
  const auto metrics_path = (fs::path(o.out_dir) / "metrics.jsonl").string();
  MetricsLog metrics(metrics_path, o.resume);
  nlohmann::json& s = out.json;
  s["mitigation"] = o.mitigation;
  s["workers"] = o.workers;
  s["device"] = device.str();

  auto corpus = load_corpus(o.corpus);
  s["corpus"] = {{"source", corpus.source}, {"vocab_size", corpus.vocab_size},
                 {"train_tokens", corpus.train.size()}, {"heldout_tokens", corpus.heldout.size()}};
  compile::set_attention_mitigation(o.mitigation);
  auto target = obtain_target(o, device, corpus, metrics, s);

  std::vector<int64_t> ranks;
  if (child) ranks.push_back(o.worker_rank);
  else
    for (int64_t r = 0; r < o.workers; ++r) ranks.push_back(r);
  DrafterPipeline pipeline(target, corpus, o.drafter, o.run, ranks);
  const auto identity = drafter_identity(*target, corpus, o.drafter, o.run);
  const auto ckpt = (fs::path(o.out_dir) / "drafters.ckpt").string();
  if (o.resume && !isolate) {
    pipeline.load(ckpt, identity);
    if (o.progress) std::printf("resumed %s at steps", ckpt.c_str());
    for (auto& w : pipeline.workers())
      if (o.progress) std::printf(" %lld", static_cast<long long>(w.step));
    if (o.progress) std::printf("\n");
  }

  if (o.mitigation == "precompile") {
    auto c0 = std::chrono::steady_clock::now();
    compile::precompile_attention(
        [&] { warm_declared_shapes(*target, o.drafter, corpus, o.run, o.evaluate ? &o.eval : nullptr); },
        o.freeze);
    s["precompile_seconds"] = since(c0);
  }

  DraftRunStats stats;
  if (isolate) {
    stats = run_children(o, target->kind() == "native" && o.target_file.empty()
                                ? (fs::path(o.out_dir) / "target.ckpt").string()
                                : o.target_file);
    int64_t loaded = 0;
    for (int64_t r = 0; r < o.workers; ++r) {
      auto p = (fs::path(o.out_dir) / fmt::format("rank-{}", r) / "drafters.ckpt").string();
      if (fs::exists(p)) loaded += pipeline.load(p, identity, false);
    }
    if (loaded != o.workers) stats.errors.push_back(fmt::format("only {} of {} worker processes left a checkpoint", loaded, o.workers));
    for (auto& w : pipeline.workers())
      if (w.step < o.run.steps) stats.interrupted = true;
  } else {
    DraftRunHooks hooks;
    hooks.stop = &stop_flag();
    hooks.metrics = &metrics;
    hooks.progress = o.progress;
    hooks.single_thread = child;  // an isolate_process child: one drafter, no concurrency inside
    stats = pipeline.run(hooks);
  }
  pipeline.save(ckpt, identity);
  auto st = compile::attention_stats();
  // Relative to this summary's folder: a report holds no absolute path of the machine that wrote it.
  s["drafters"] = {{"checkpoint", "drafters.ckpt"},
                   {"steps_done", stats.steps_done},
                   {"seconds", stats.seconds},
                   {"steps_per_s", stats.steps_per_s},
                   {"mode", isolate ? "processes" : "threads"}};
  nlohmann::json per = nlohmann::json::array();
  for (auto& w : pipeline.workers()) {
    double recent = 0;
    size_t n = std::min<size_t>(20, w.losses.size());
    for (size_t i = w.losses.size() - n; i < w.losses.size(); ++i) recent += w.losses[i] / static_cast<double>(n);
    per.push_back({{"rank", w.rank}, {"step", w.step}, {"recent_loss", n ? nlohmann::json(recent) : nlohmann::json()},
                   {"accuracy", w.last_accuracy}});
  }
  s["drafters"]["workers"] = per;
  s["attention"] = {{"calls", st.calls},         {"compiles", st.compiles}, {"cache_hits", st.cache_hits},
                    {"fallbacks", st.fallbacks}, {"errors", st.errors},     {"compile_seconds", st.compile_seconds}};
  out.errors = stats.errors;
  // Steps left over are an interrupt, unless --stop-after asked for them.
  out.interrupted = stop_flag().load() || (stats.interrupted && o.run.stop_after == 0);
  out.stopped_early = stats.interrupted && !out.interrupted;

  if (o.evaluate && !child && !out.interrupted && !out.stopped_early && out.errors.empty()) {
    nlohmann::json evals = nlohmann::json::array();
    double tau_sum = 0;
    bool lossless = true;
    std::vector<Drafter*> drafters;
    for (auto& w : pipeline.workers()) drafters.push_back(w.drafter.get());
    auto results = evaluate(*target, drafters, corpus, o.eval);
    for (size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      const auto rank = pipeline.workers()[i].rank;
      auto j = r.to_json();
      j["rank"] = rank;
      j["block_size"] = o.eval.block_size;
      evals.push_back(j);
      metrics.write({{"event", "eval"}, {"worker", rank}, {"tau", r.tau}, {"lossless", r.lossless()},
                     {"block_size", o.eval.block_size}});
      tau_sum += r.tau;
      lossless = lossless && r.lossless();
      if (o.progress)
        std::printf("eval drafter %lld: tau %.3f at block size %lld (%lld verify steps, %.2fs; target-only %.2fs), lossless %s\n",
                    static_cast<long long>(rank), r.tau, static_cast<long long>(o.eval.block_size),
                    static_cast<long long>(r.verify_steps), r.speculative_seconds, r.greedy_seconds,
                    r.lossless() ? "yes" : "NO");
    }
    s["eval"] = {{"per_drafter", evals},
                 {"mean_tau", tau_sum / static_cast<double>(pipeline.workers().size())},
                 {"lossless", lossless}};
    if (!lossless) out.errors.push_back("speculative decoding output differs from target-only greedy decoding");
  }
  s["errors"] = out.errors;
  s["interrupted"] = out.interrupted;
  s["stopped_early"] = out.stopped_early;
  s["wall_seconds"] = since(t0);
  racelab::write_file_atomically((fs::path(o.out_dir) / "summary.json").string(), s.dump(2) + "\n");
  return out;
}

}  // namespace racelab::trainer
