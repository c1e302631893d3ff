#include "trainer/train/target_trainer.h"
#include "compile/torch_compat.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace racelab::trainer {
namespace {

// `windows` come from the corpus on the CPU; they go where the target is.
at::Tensor lm_loss(Target& target, const at::Tensor& cpu_windows) {
  auto windows = cpu_windows.to(target.device());
  auto inputs = windows.slice(1, 0, windows.size(1) - 1);
  auto labels = windows.slice(1, 1);
  auto logits = target.forward(inputs).logits;
  return at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}), labels.reshape({-1}));
}

}  // namespace

double heldout_loss(Target& target, const data::Corpus& corpus, int64_t seq_len, int64_t batch, int64_t batches,
                    uint64_t seed) {
  at::NoGradGuard no_grad;
  auto rng = Rng::derive(seed, 0xE7A1);
  double total = 0;
  for (int64_t i = 0; i < batches; ++i)
    total += lm_loss(target, data::sample_windows(corpus.heldout, batch, seq_len + 1, rng)).item<double>();
  return total / static_cast<double>(batches);
}

TargetTrainResult train_target(NativeTarget& target, const data::Corpus& corpus, const TargetTrainConfig& cfg,
                               MetricsLog* metrics, bool progress, const std::atomic<bool>* stop) {
  TargetTrainResult r;
  AdamW opt(target.params().trainable(), cfg.adamw);
  Progress line("target", cfg.steps);
  std::vector<double> recent;
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t step = 0; step < cfg.steps; ++step) {
    if (stop != nullptr && stop->load()) {
      r.interrupted = true;
      break;
    }
    auto rng = Rng::derive(cfg.seed, 0x7A6E7, static_cast<uint64_t>(step));
    auto loss = lm_loss(target, data::sample_windows(corpus.train, cfg.batch, cfg.seq_len + 1, rng));
    double lr = cfg.adamw.lr * (step < cfg.warmup ? static_cast<double>(step + 1) / cfg.warmup
                                                  : 0.1 + 0.9 * 0.5 * (1 + std::cos(M_PI * (step - cfg.warmup) /
                                                                                   std::max<int64_t>(1, cfg.steps - cfg.warmup))));
    opt.zero_grad();
    loss.backward();
    opt.set_lr(lr);
    opt.step();
    double l = loss.item<double>();
    recent.push_back(l);
    if (recent.size() > 20) recent.erase(recent.begin());
    r.steps = step + 1;
    if (metrics != nullptr && (step % 10 == 0 || step + 1 == cfg.steps))
      metrics->write({{"event", "target_step"}, {"step", step + 1}, {"loss", l}, {"lr", lr}});
    if (progress) {
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      line.update(step + 1, (step + 1) / std::max(secs, 1e-9), l, step + 1 == cfg.steps);
    }
  }
  if (progress) line.finish();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto l : recent) r.train_loss += l / static_cast<double>(recent.size());
  r.heldout_loss = heldout_loss(target, corpus, cfg.seq_len, cfg.batch, cfg.eval_batches, cfg.seed);
  if (metrics != nullptr)
    metrics->write({{"event", "target_eval"}, {"step", r.steps}, {"train_loss", r.train_loss},
                    {"heldout_loss", r.heldout_loss}});
  return r;
}

}  // namespace racelab::trainer
