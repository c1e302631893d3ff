// trainer/train/run.h -- `racelab train` from top to bottom.
//
//   corpus -> target (load, resume, or train) -> mitigation (+ precompile)
//          -> drafters (N threads, or N processes for isolate_process)
//          -> checkpoint -> speculative evaluation -> summary.json
//
// Everything a run writes lives in `out_dir`: target.ckpt, drafters.ckpt,
// metrics.jsonl, summary.json (and rank-<i>/ per process for isolate_process).
#ifndef TRAINER_TRAIN_RUN_H_
#define TRAINER_TRAIN_RUN_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainer/data/corpus.h"
#include "trainer/eval/speculative.h"
#include "trainer/model/drafter.h"
#include "trainer/model/target.h"
#include "trainer/pipeline/drafter_pipeline.h"
#include "trainer/train/target_trainer.h"

namespace racelab::trainer {

struct CorpusOptions {
  std::string data_file;           // empty: the synthetic language
  data::SyntheticSpec synthetic;
};
data::Corpus load_corpus(const CorpusOptions& options);  // BadInput for a bad file

// Everything `racelab train` runs with. The defaults are the command's: about
// 2-3 minutes end to end on 2 CPU cores; its flags start from them
// (cli/train_command.cpp), and each flag's range is in trainer/train/limits.h.
struct TrainOptions {
  TrainOptions();

  std::string out_dir = "racelab-run";
  CorpusOptions corpus;
  std::string target_file;         // empty: train (or resume) the target in out_dir
  TargetConfig target;             // vocab_size is taken from the corpus
  TargetTrainConfig target_train;
  DrafterConfig drafter;
  DraftRunConfig run;
  int64_t workers = 2;
  std::string device = "cpu";      // cpu, cuda or cuda:N (trainer/util/device.h)
  // The fix upstream shipped (a thread-local capture flag); "none" reproduces
  // the upstream failure instead.
  std::string mitigation = "isolate_thread";
  bool freeze = false;             // precompile: a shape not warmed up raises
  bool resume = false;
  bool evaluate = true;
  EvalConfig eval;
  bool progress = true;
  int64_t worker_rank = -1;        // >= 0: an isolate_process child training only this rank
  std::vector<std::string> reexec_args;  // isolate_process: this command's own arguments
};

struct TrainSummary {
  nlohmann::json json;             // also written to out_dir/summary.json
  std::vector<std::string> errors;
  bool interrupted = false;        // SIGINT: stopped early, checkpoint saved
  bool stopped_early = false;      // --stop-after as asked: checkpoint saved, --resume continues
};

// SIGINT sets this flag (install_sigint_handler); every phase polls it.
std::atomic<bool>& stop_flag();
void install_sigint_handler();

TrainSummary run_training(const TrainOptions& options);

// Runs every attention shape a run declares, in the mode it will run in, for
// the precompile mitigation: per (seq_len, block_size) the producer's target
// forward (no grad) and a drafter training step's forward + backward (on a
// throwaway drafter); with `eval`, the evaluation's no-grad shapes too.
void warm_declared_shapes(Target& target, const DrafterConfig& dcfg, const data::Corpus& corpus,
                          const DraftRunConfig& cfg, const EvalConfig* eval);

// What a drafters checkpoint must match to be resumed or evaluated.
nlohmann::json drafter_identity(Target& target, const data::Corpus& corpus, const DrafterConfig& dcfg,
                                const DraftRunConfig& cfg);

}  // namespace racelab::trainer

#endif  // TRAINER_TRAIN_RUN_H_
