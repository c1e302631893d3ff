// tests/trainer/tiny.h -- tiny, fast configurations shared by the trainer tests.
#ifndef TESTS_TRAINER_TINY_H_
#define TESTS_TRAINER_TINY_H_

#include <ATen/Parallel.h>

#include <memory>
#include <string>

#include "compile/attention_kernel.h"
#include "trainer/data/corpus.h"
#include "trainer/model/target.h"
#include "trainer/pipeline/drafter_pipeline.h"
#include "trainer/util/threads.h"

namespace tiny {

inline racelab::trainer::data::Corpus corpus(uint64_t seed = 5) {
  racelab::trainer::data::SyntheticSpec s;
  s.seed = seed;
  s.tokens = 8192;
  return racelab::trainer::data::make_synthetic_corpus(s);
}

inline std::shared_ptr<racelab::trainer::NativeTarget> target(const racelab::trainer::data::Corpus& c, uint64_t seed = 3) {
  racelab::trainer::TargetConfig t;
  t.vocab_size = c.vocab_size;
  t.d_model = 32;
  t.layers = 2;
  t.heads = 2;
  t.max_len = 64;
  auto m = std::make_shared<racelab::trainer::NativeTarget>(t, seed);
  m->params().freeze();
  return m;
}

inline racelab::trainer::DrafterConfig drafter() {
  racelab::trainer::DrafterConfig d;
  d.layers = 1;
  d.heads = 2;
  return d;
}

inline racelab::trainer::DraftRunConfig run(int64_t steps = 6, uint64_t seed = 11) {
  racelab::trainer::DraftRunConfig r;
  r.steps = steps;
  r.batch = 2;
  r.seq_lens = {16, 24};
  r.block_sizes = {2, 4};
  r.anchors = 3;
  r.warmup = 2;
  r.seed = seed;
  return r;
}

// Multi-threaded tests run under a mitigation that holds, so they test the
// trainer, not the compile race.
inline void quiet_setup() {
  racelab::trainer::use_single_intra_op_thread();
  racelab::compile::set_attention_mitigation("global_lock");
  racelab::compile::reset_attention();
}

inline std::string temp_dir(const std::string& name) {
  auto d = std::string(::testing::TempDir()) + "racelab_trainer_" + name + "_" + std::to_string(::getpid());
  std::string cmd = "rm -rf '" + d + "' && mkdir -p '" + d + "'";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("cannot create " + d);
  return d;
}

}  // namespace tiny

#endif  // TESTS_TRAINER_TINY_H_
