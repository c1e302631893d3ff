// `racelab train`: train DFlash-style block drafters for a target language
// model with N worker threads, then evaluate speculative decoding (tau,
// losslessness). Each drafter's attention is compiled by compile/; the
// mitigation around it is --mitigation (docs/ARCHITECTURE.md, "Mitigations").
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/train_flags.h"
#include "racelab/exit_code.h"
#include "trainer/train/run.h"

namespace racelab::cli {

int train_command(int argc, char** argv) {
  racelab::trainer::TrainOptions o;  // the defaults are the struct's (trainer/train/run.h)
  bool no_eval = false, quiet = false;
  std::string seq_lens = fmt::format("{}", fmt::join(o.run.seq_lens, ",")),
              block_sizes = fmt::format("{}", fmt::join(o.run.block_sizes, ","));

  CLI::App app{"Train DFlash-style block drafters for a target LM: N worker threads (one drafter each), "
               "then speculative-decoding evaluation (tau, losslessness).",
               argv[0]};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--out", o.out_dir, "Run directory (target.ckpt, drafters.ckpt, metrics.jsonl, summary.json)")
      ->capture_default_str();
  add_corpus_flags(app, o.corpus);
  app.add_option("--target", o.target_file, "Use this target (racelab checkpoint or TorchScript file) instead of training one");
  add_target_flags(app, o.target, o.target_train);
  app.add_option("--seed", o.run.seed, "Seed of the drafters' data streams and initialisation")
      ->check(seed_value())
      ->capture_default_str();
  add_device_flag(app, o.device);
  app.add_option("--workers", o.workers, "Drafter worker threads (one drafter each)")->capture_default_str()->check(in_range(limits::kWorkers));
  app.add_option("--steps", o.run.steps, "Training steps per drafter")->capture_default_str()->check(in_range(limits::kSteps));
  app.add_option("--batch", o.run.batch, "Sequences per drafter batch")->capture_default_str()->check(in_range(limits::kBatch));
  app.add_option("--seq-lens", seq_lens, "Comma-separated sequence lengths, cycled per step")->capture_default_str();
  app.add_option("--block-sizes", block_sizes, "Comma-separated block sizes (anchor + mask tokens), cycled per step")
      ->capture_default_str();
  app.add_option("--anchors", o.run.anchors, "Blocks per training sequence")->capture_default_str()->check(in_range(limits::kAnchors));
  app.add_option("--gamma", o.drafter.gamma, "Loss decay over block positions: weight exp(-(k-1)/gamma)")
      ->capture_default_str()
      ->check(positive_number());
  app.add_option("--drafter-layers", o.drafter.layers, "Drafter layers")->capture_default_str()->check(in_range(limits::kDrafterLayers));
  app.add_option("--drafter-heads", o.drafter.heads, "Drafter attention heads")->capture_default_str()->check(in_range(limits::kDrafterHeads));
  app.add_option("--lr", o.run.adamw.lr, "Drafter peak learning rate (AdamW)")->capture_default_str()->check(positive_number());
  app.add_option("--queue-depth", o.run.queue_depth, "Batches the producer may queue per worker")
      ->capture_default_str()
      ->check(in_range(limits::kQueueDepth));
  app.add_option("--mitigation", o.mitigation, "Compile-race mitigation around attention")
      ->capture_default_str()
      ->check(CLI::Validator(check_mitigation, "MITIGATION"));
  app.add_flag("--freeze", o.freeze, "With --mitigation precompile: a shape not warmed up raises");
  app.add_flag("--resume", o.resume, "Continue from the checkpoints in --out");
  app.add_option("--stop-after", o.run.stop_after, "Stop each drafter after this many steps in this session (then --resume)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--no-eval", no_eval, "Skip the speculative-decoding evaluation");
  app.add_option("--eval-prompts", o.eval.prompts, "Held-out prompts for evaluation")->capture_default_str()->check(in_range(limits::kEvalPrompts));
  app.add_option("--eval-tokens", o.eval.new_tokens, "Tokens generated per prompt")->capture_default_str()->check(in_range(limits::kEvalTokens));
  app.add_option("--eval-block-size", o.eval.block_size, "Block size at evaluation (default: the first of --block-sizes)");
  app.add_flag("--quiet", quiet, "No progress output");
  app.add_option("--worker-rank", o.worker_rank, "(internal) isolate_process child: train only this drafter")
      ->group("");
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  for (const std::string* input : {&o.corpus.data_file, &o.target_file})
    if (!input->empty())
      if (int rc = require_input_file(app, *input); rc != kGoOn) return rc;

  auto parse_list = [&](const std::string& text, const char* flag) {
    std::vector<int64_t> out;
    size_t pos = 0;
    while (pos <= text.size()) {
      auto comma = text.find(',', pos);
      auto item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      try {
        size_t used = 0;
        auto v = std::stoll(item, &used);
        if (used != item.size() || v < 1) throw std::invalid_argument(item);
        out.push_back(v);
      } catch (const std::exception&) {
        throw CLI::ValidationError(flag, fmt::format("'{}' is not a comma-separated list of positive integers", text));
      }
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    return out;
  };
  try {
    o.run.seq_lens = parse_list(seq_lens, "--seq-lens");
    o.run.block_sizes = parse_list(block_sizes, "--block-sizes");
    for (auto b : o.run.block_sizes)
      if (b < 2) throw CLI::ValidationError("--block-sizes", fmt::format("block size {} < 2", b));
    if (app.count("--eval-block-size") == 0) o.eval.block_size = o.run.block_sizes.front();
    if (o.eval.block_size < 2 || o.eval.block_size > o.drafter.max_block)
      throw CLI::ValidationError("--eval-block-size", fmt::format("must be in [2, {}]", o.drafter.max_block));
    o.eval.prompt_len = std::min<int64_t>(o.eval.prompt_len, o.target.max_len / 4);
    if (o.target_file.empty() && o.eval.prompt_len + o.eval.new_tokens + o.eval.block_size > o.target.max_len)
      throw CLI::ValidationError("--eval-tokens", fmt::format("prompt {} + {} tokens + block {} exceed --max-len {}",
                                                               o.eval.prompt_len, o.eval.new_tokens,
                                                               o.eval.block_size, o.target.max_len));
    if (o.target_file.empty() && o.target_train.seq_len >= o.target.max_len)
      throw CLI::ValidationError("--target-seq-len", fmt::format("must be < --max-len {}", o.target.max_len));
    if (o.freeze && o.mitigation != "precompile")
      throw CLI::ValidationError("--freeze", "only applies to --mitigation precompile");
  } catch (const CLI::Error& e) {
    return usage_error(app, e);
  }
  o.evaluate = !no_eval;
  o.progress = !quiet;
  o.eval.seed = o.run.seed;
  o.target_train.seed = o.run.seed;
  for (int i = 1; i < argc; ++i) o.reexec_args.emplace_back(argv[i]);
  o.reexec_args.insert(o.reexec_args.begin(), "train");

  return run_guarded(
      [&] {
        racelab::trainer::install_sigint_handler();
        auto r = racelab::trainer::run_training(o);
        if (!quiet) {
          std::printf("summary: %s/summary.json  drafter steps/s %.2f  wall %.1fs\n", o.out_dir.c_str(),
                      r.json["drafters"].value("steps_per_s", 0.0), r.json.value("wall_seconds", 0.0));
          if (r.json.contains("eval"))
            std::printf("mean tau %.3f at block size %lld, lossless: %s\n", r.json["eval"]["mean_tau"].get<double>(),
                        static_cast<long long>(o.eval.block_size), r.json["eval"]["lossless"].get<bool>() ? "yes" : "NO");
        }
        for (auto& e : r.errors) std::fprintf(stderr, "error: %s\n", e.c_str());
        if (!r.errors.empty()) return static_cast<int>(kExitExpectationFailed);
        if (r.interrupted) {
          std::fprintf(stderr, "interrupted: checkpoint saved in %s; continue with the same command plus --resume\n",
                       o.out_dir.c_str());
          return static_cast<int>(kExitInterrupted);
        }
        if (r.stopped_early && !quiet)
          std::printf("stopped after --stop-after %lld steps per drafter as asked: checkpoint in %s; continue with "
                      "the same command plus --resume\n",
                      static_cast<long long>(o.run.stop_after), o.out_dir.c_str());
        return static_cast<int>(kExitOk);
      },
      "train");
}

}  // namespace racelab::cli
