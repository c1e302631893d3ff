// `racelab train-target`: train the target language model on the corpus and
// report its held-out loss, or evaluate an existing target (--load).
#include <algorithm>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/train_flags.h"
#include "racelab/exit_code.h"
#include "trainer/model/target_file.h"
#include "trainer/train/run.h"
#include "trainer/util/device.h"
#include "trainer/util/errors.h"
#include "trainer/util/threads.h"

namespace racelab::cli {

int train_target_command(int argc, char** argv) {
  racelab::trainer::CorpusOptions corpus;
  racelab::trainer::TargetConfig t;
  racelab::trainer::TargetTrainConfig tt;
  tt.steps = 300;
  std::string out = "racelab-target.ckpt", load, export_ts, device = "cpu";
  uint64_t seed = 1;
  bool quiet = false;
  CLI::App app{"Train the target language model on the corpus and report its held-out loss "
               "(or, with --load, evaluate an existing target).",
               argv[0]};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--out", out, "Where to save the target checkpoint")->capture_default_str();
  add_corpus_flags(app, corpus);
  add_target_flags(app, t, tt);
  add_device_flag(app, device);
  app.add_option("--seed", seed, "Seed of initialisation and batches")->check(seed_value())->capture_default_str();
  app.add_option("--load", load, "Evaluate this target (racelab checkpoint or TorchScript) instead of training");
  app.add_option("--export-torchscript", export_ts, "Also write the trained target as a TorchScript file");
  app.add_flag("--quiet", quiet, "No progress output");
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  for (const std::string* input : {&corpus.data_file, &load})
    if (!input->empty())
      if (int rc = require_input_file(app, *input); rc != kGoOn) return rc;
  // Before the training, as every output is: a path that cannot be written must not cost the run.
  if (int rc = require_output(app.get_name(), "--export-torchscript", export_ts, Output::kFile); rc != kGoOn) return rc;
  tt.seed = seed;
  return run_guarded(
      [&] {
        racelab::trainer::use_single_intra_op_thread();
        racelab::trainer::install_sigint_handler();
        auto c = racelab::trainer::load_corpus(corpus);
        if (!load.empty()) {
          auto target = racelab::trainer::load_target(load);
          target->to(racelab::trainer::compute_device(device));
          if (target->config().vocab_size != c.vocab_size)
            throw racelab::trainer::BadInput(fmt::format("target '{}': vocabulary {} does not match the corpus ({})", load,
                                       target->config().vocab_size, c.vocab_size));
          double h = racelab::trainer::heldout_loss(*target, c, std::min(tt.seq_len, target->config().max_len - 1), tt.batch,
                                           tt.eval_batches, seed);
          std::printf("target %s (%s): held-out loss %.4f\n", load.c_str(), target->kind().c_str(), h);
          return static_cast<int>(kExitOk);
        }
        t.vocab_size = c.vocab_size;
        if (tt.seq_len >= t.max_len)
          throw std::invalid_argument(fmt::format("--target-seq-len {} must be < --max-len {}", tt.seq_len, t.max_len));
        racelab::trainer::NativeTarget target(t, seed);
        target.to(racelab::trainer::compute_device(device));  // before train_target's optimizer takes the parameters
        auto r = racelab::trainer::train_target(target, c, tt, nullptr, !quiet, &racelab::trainer::stop_flag());
        if (r.interrupted) {
          std::fprintf(stderr, "interrupted after %lld steps; nothing saved\n", static_cast<long long>(r.steps));
          return static_cast<int>(kExitInterrupted);
        }
        racelab::trainer::save_target(target, out,
                             {{"corpus", c.source},
                              {"corpus_fingerprint", fmt::format("{:016x}", c.fingerprint())},
                              {"steps", r.steps},
                              {"train_loss", r.train_loss},
                              {"heldout_loss", r.heldout_loss}});
        if (!export_ts.empty()) racelab::trainer::export_torchscript(target, export_ts);
        std::printf("target: %lld steps in %.1fs, train loss %.4f, held-out loss %.4f -> %s\n",
                    static_cast<long long>(r.steps), r.seconds, r.train_loss, r.heldout_loss, out.c_str());
        return static_cast<int>(kExitOk);
      },
      "train-target");
}

}  // namespace racelab::cli
