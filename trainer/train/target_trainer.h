// trainer/train/target_trainer.h -- trains the target LM (nanoGPT style: one
// loop, AdamW, warm-up + cosine, periodic held-out evaluation).
#ifndef TRAINER_TRAIN_TARGET_TRAINER_H_
#define TRAINER_TRAIN_TARGET_TRAINER_H_

#include <atomic>
#include <cstdint>

#include "trainer/data/corpus.h"
#include "trainer/model/target.h"
#include "trainer/pipeline/metrics.h"
#include "trainer/train/adamw.h"

namespace racelab::trainer {

struct TargetTrainConfig {
  int64_t steps = 600;
  int64_t batch = 16;
  int64_t seq_len = 64;
  int64_t warmup = 30;
  AdamWOptions adamw;
  uint64_t seed = 1;
  int64_t eval_batches = 8;  // held-out windows: eval_batches * batch
};

struct TargetTrainResult {
  int64_t steps = 0;
  double train_loss = 0;     // mean over the last 20 steps
  double heldout_loss = 0;
  double seconds = 0;
  bool interrupted = false;
};

TargetTrainResult train_target(NativeTarget& target, const data::Corpus& corpus, const TargetTrainConfig& cfg,
                               MetricsLog* metrics, bool progress, const std::atomic<bool>* stop);

// Mean next-token cross-entropy on fixed held-out windows (same windows for a given seed).
double heldout_loss(Target& target, const data::Corpus& corpus, int64_t seq_len, int64_t batch, int64_t batches,
                    uint64_t seed);

}  // namespace racelab::trainer

#endif  // TRAINER_TRAIN_TARGET_TRAINER_H_
