// cli/train_flags.cpp -- see train_flags.h.
#include "cli/train_flags.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include <fmt/format.h>

#include "cli/flags.h"
#include "compile/attention_kernel.h"
#include "racelab/exit_code.h"
#include "trainer/train/run.h"
#include "trainer/util/device.h"
#include "trainer/util/errors.h"

namespace racelab::cli {

CLI::Range in_range(const limits::Range& range) { return CLI::Range(range.min, range.max); }

void add_corpus_flags(CLI::App& app, racelab::trainer::CorpusOptions& c) {
  app.add_option("--data", c.data_file, "Plain-text training file (byte-level tokens); default: the synthetic language");
  app.add_option("--corpus-seed", c.synthetic.seed, "Seed of the synthetic language")->capture_default_str();
  app.add_option("--corpus-tokens", c.synthetic.tokens, "Tokens in the synthetic corpus")
      ->capture_default_str()
      ->check(in_range(limits::kCorpusTokens));
}

void add_target_flags(CLI::App& app, racelab::trainer::TargetConfig& t, racelab::trainer::TargetTrainConfig& tt) {
  app.add_option("--d-model", t.d_model, "Target width")->capture_default_str()->check(in_range(limits::kDModel));
  app.add_option("--layers", t.layers, "Target layers")->capture_default_str()->check(in_range(limits::kLayers));
  app.add_option("--heads", t.heads, "Target attention heads")->capture_default_str()->check(in_range(limits::kHeads));
  app.add_option("--max-len", t.max_len, "Target context length")->capture_default_str()->check(in_range(limits::kMaxLen));
  app.add_option("--target-steps", tt.steps, "Target training steps")->capture_default_str()->check(in_range(limits::kSteps));
  app.add_option("--target-batch", tt.batch, "Target batch size")->capture_default_str()->check(in_range(limits::kBatch));
  app.add_option("--target-seq-len", tt.seq_len, "Target training sequence length")
      ->capture_default_str()
      ->check(in_range(limits::kTargetSeqLen));
  app.add_option("--target-lr", tt.adamw.lr, "Target peak learning rate")->capture_default_str()->check(positive_number());
}

void add_device_flag(CLI::App& app, std::string& device) {
  app.add_option("--device", device, "Where the models and batches live: cpu, cuda or cuda:N")
      ->capture_default_str()
      ->check(CLI::Validator(racelab::trainer::check_compute_device, "DEVICE"));
}

std::string check_mitigation(const std::string& m) {
  const auto& names = racelab::compile::mitigation_names();
  if (std::find(names.begin(), names.end(), m) != names.end()) return {};
  return fmt::format("unknown mitigation '{}' (expected one of: {})", m, fmt::join(names, ", "));
}

int run_guarded(const std::function<int()>& body, const char* cmd) {
  try {
    return body();
  } catch (const racelab::trainer::BadInput& e) {
    std::fprintf(stderr, "racelab %s: %s\n", cmd, e.what());
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "racelab %s: invalid configuration: %s\n", cmd, e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    if (!racelab::trainer::stop_flag().load()) throw;
    std::fprintf(stderr, "racelab %s: interrupted: %s\n", cmd, e.what());
    return kExitInterrupted;
  }
}

}  // namespace racelab::cli
