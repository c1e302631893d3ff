// trainer/pipeline/drafter_pipeline.h -- N drafters trained by N worker threads.
//
//   producer thread: for step s, for each worker w: sample worker w's batch s,
//                    run the frozen target (hidden states of the tapped layers),
//                    push into w's bounded queue
//   worker w:        pop, drafter forward (block attention), weighted block
//                    loss, backward, AdamW step, metrics
//   calling thread:  progress line until every worker is done, then joins
//
// Batch (w, s) -- its tokens, sequence length, block size and anchors -- is a
// pure function of (seed, rank w, step s). Together with one queue per worker,
// and drafters initialised from (seed, rank), that makes a run reproducible
// whatever the thread timing, and makes --resume continue exactly.
//
// Every thread is a racelab::Thread and every lock a racelab::Mutex, so the
// racelab scheduler can control a run; without a scheduler this is an ordinary
// multi-threaded trainer. Exceptions (e.g. the compile layer's
// NestedCaptureError) stop the thread that raised them and are collected.
#ifndef TRAINER_PIPELINE_DRAFTER_PIPELINE_H_
#define TRAINER_PIPELINE_DRAFTER_PIPELINE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainer/data/corpus.h"
#include "trainer/model/drafter.h"
#include "trainer/model/target.h"
#include "trainer/pipeline/metrics.h"
#include "trainer/train/adamw.h"

namespace racelab::trainer {

struct DraftRunConfig {
  int64_t steps = 400;                     // per worker, total (the LR schedule spans these)
  int64_t batch = 16;
  std::vector<int64_t> seq_lens{64};       // cycled per step: new lengths recompile attention
  std::vector<int64_t> block_sizes{4};     // cycled per step: new block sizes too
  int64_t anchors = 16;                    // blocks per sequence
  AdamWOptions adamw;
  int64_t warmup = 20;                     // linear warm-up, then cosine to 10%
  int64_t queue_depth = 2;
  uint64_t seed = 1;
  int64_t stop_after = 0;                  // >0: each worker stops after this many steps in this session
  nlohmann::json to_json() const;          // what a resumed run must match
  void validate(int64_t target_max_len) const;
};

// The batch worker `rank` trains on at `step`.
struct DraftBatch {
  int64_t step = 0;
  int64_t seq_len = 0, block_size = 0;
  std::vector<int64_t> anchors;
  at::Tensor tokens;  // [batch, seq_len]
  at::Tensor taps;    // [batch, seq_len, taps*d] (filled by the producer)
};
// Its tokens are made on the CPU from the corpus and handed over on `device`.
DraftBatch make_draft_batch(const data::Corpus& corpus, const DraftRunConfig& cfg, int64_t rank, int64_t step,
                            c10::Device device = at::kCPU);

// One drafter being trained: its model, optimizer and position in its stream.
struct DraftWorker {
  int64_t rank = 0;
  std::unique_ptr<Drafter> drafter;
  std::unique_ptr<AdamW> optimizer;
  int64_t step = 0;                  // steps completed
  std::vector<double> losses;        // this session's losses, in step order
  std::vector<double> last_accuracy; // per block position 1..B-1 at the last step
};

struct DraftRunStats {
  int64_t steps_done = 0;            // this session, all workers
  double seconds = 0;
  double steps_per_s = 0;
  bool interrupted = false;          // stop flag or stop_after
  std::vector<std::string> errors;   // "worker 1: ..." / "producer: ..."
};

struct DraftRunHooks {
  const std::atomic<bool>* stop = nullptr;  // set by SIGINT
  MetricsLog* metrics = nullptr;
  bool progress = false;                    // print a progress line from the calling thread
  // No threads at all: the calling thread computes each batch's target states
  // and trains every worker in turn. One process per drafter (isolate_process)
  // uses this, so that nothing inside a process runs attention concurrently.
  bool single_thread = false;
};

class DrafterPipeline {
 public:
  // Builds one fresh drafter per rank, initialised from (cfg.seed, rank).
  DrafterPipeline(std::shared_ptr<Target> target, const data::Corpus& corpus, const DrafterConfig& dcfg,
                  const DraftRunConfig& cfg, const std::vector<int64_t>& ranks);

  DraftRunStats run(const DraftRunHooks& hooks);

  // One synchronous training step of `w` on its next batch (no threads): used by
  // warm-up and by tests.
  double train_step(DraftWorker& w, DraftBatch batch, MetricsLog* metrics);

  std::vector<DraftWorker>& workers() { return workers_; }
  const DraftRunConfig& config() const { return cfg_; }
  const DrafterConfig& drafter_config() const { return dcfg_; }
  Target& target() { return *target_; }

  // Checkpoint: every worker's drafter, optimizer and step. `identity` is what
  // a resumed run must match (target, corpus, configs). Atomic write.
  void save(const std::string& path, const nlohmann::json& identity) const;
  // With require_all_ranks=false, loads only the workers whose rank the file
  // holds (merging per-process checkpoints) and returns how many it loaded.
  int64_t load(const std::string& path, const nlohmann::json& identity, bool require_all_ranks = true);

 private:
  double lr_at(int64_t step) const;
  std::shared_ptr<Target> target_;
  const data::Corpus& corpus_;
  DrafterConfig dcfg_;
  DraftRunConfig cfg_;
  std::vector<DraftWorker> workers_;
};

}  // namespace racelab::trainer

#endif  // TRAINER_PIPELINE_DRAFTER_PIPELINE_H_
