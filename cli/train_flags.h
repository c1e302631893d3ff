// cli/train_flags.h -- what `racelab train` and `racelab train-target` share:
// corpus and target flags, the mitigation check, and the mapping of the
// trainer's failures onto exit codes. Flags map 1:1 onto racelab::trainer::TrainOptions
// (trainer/train/run.h).
#ifndef RACELAB_CLI_TRAIN_FLAGS_H_
#define RACELAB_CLI_TRAIN_FLAGS_H_

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "trainer/train/limits.h"
#include "trainer/train/run.h"

namespace racelab::cli {

namespace limits = racelab::trainer::limits;

// A flag's check from the trainer's own range (trainer/train/limits.h).
CLI::Range in_range(const limits::Range& range);

void add_corpus_flags(CLI::App& app, racelab::trainer::CorpusOptions& corpus);
void add_target_flags(CLI::App& app, racelab::trainer::TargetConfig& target, racelab::trainer::TargetTrainConfig& training);

// --device cpu|cuda|cuda:N, checked at parse time: a device this build cannot use
// here (no CUDA in this LibTorch, no such GPU) is a usage error (exit 2) naming why.
void add_device_flag(CLI::App& app, std::string& device);

// A CLI11 validator: "" for a known mitigation, else the message listing them.
std::string check_mitigation(const std::string& name);

// Runs `body`; an unusable file (racelab::trainer::BadInput) exits kExitBadInput, an
// invalid configuration kExitUsage, anything thrown after Ctrl-C
// kExitInterrupted. Other exceptions propagate (main reports them as internal).
int run_guarded(const std::function<int()>& body, const char* command);

}  // namespace racelab::cli

#endif  // RACELAB_CLI_TRAIN_FLAGS_H_
