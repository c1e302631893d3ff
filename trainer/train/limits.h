// trainer/train/limits.h -- the values each trainer setting may take.
//
// One home for them: `racelab train`'s and `train-target`'s flags
// (cli/train_flags.cpp, cli/train_command.cpp) and the trainer workload's
// knobs (scenarios/register/trainer_workload.cpp) check these same ranges, so a
// setting a flag accepts is one a scenario may use, and the other way round.
// The defaults live in the option structs themselves (TrainOptions for
// `racelab train`, trainer/train/run.h).
#ifndef RACELAB_TRAINER_TRAIN_LIMITS_H_
#define RACELAB_TRAINER_TRAIN_LIMITS_H_

#include <cstdint>

namespace racelab::trainer::limits {

// Inclusive bounds.
struct Range {
  int64_t min;
  int64_t max;
};

// The target model (TargetConfig) and its training (TargetTrainConfig).
inline constexpr Range kDModel{8, 4096};
inline constexpr Range kLayers{1, 64};
inline constexpr Range kHeads{1, 64};
inline constexpr Range kMaxLen{8, 4096};
inline constexpr Range kTargetSeqLen{2, 4096};
// The corpus (CorpusOptions): byte-level tokens of the synthetic language.
inline constexpr Range kCorpusTokens{4096, 100000000};
// The drafters (DrafterConfig) and their run (DraftRunConfig).
inline constexpr Range kSteps{1, 10000000};
inline constexpr Range kBatch{1, 4096};
inline constexpr Range kAnchors{1, 4096};
inline constexpr Range kDrafterLayers{1, 64};
inline constexpr Range kDrafterHeads{1, 64};
inline constexpr Range kQueueDepth{1, 1024};
inline constexpr Range kWorkers{1, 256};
// Evaluation (EvalConfig).
inline constexpr Range kEvalPrompts{1, 100000};
inline constexpr Range kEvalTokens{1, 4096};

}  // namespace racelab::trainer::limits

#endif  // RACELAB_TRAINER_TRAIN_LIMITS_H_
