#include "trainer/pipeline/drafter_pipeline.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "racelab/sync.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/pipeline/bounded_queue.h"
#include "trainer/util/errors.h"
#include "compile/torch_compat.h"

namespace racelab::trainer {

nlohmann::json DraftRunConfig::to_json() const {
  return {{"steps", steps},
          {"batch", batch},
          {"seq_lens", seq_lens},
          {"block_sizes", block_sizes},
          {"anchors", anchors},
          {"lr", adamw.lr},
          {"weight_decay", adamw.weight_decay},
          {"grad_clip", adamw.grad_clip},
          {"warmup", warmup},
          {"seed", seed}};
}

void DraftRunConfig::validate(int64_t target_max_len) const {
  auto need = [](bool ok, const std::string& m) {
    if (!ok) throw std::invalid_argument(m);
  };
  need(steps >= 1, "steps must be >= 1");
  need(batch >= 1, "batch must be >= 1");
  need(anchors >= 1, "anchors must be >= 1");
  need(!seq_lens.empty() && !block_sizes.empty(), "seq_lens and block_sizes must not be empty");
  for (auto b : block_sizes) need(b >= 2, fmt::format("block size {} < 2 (a block is anchor + at least one mask)", b));
  for (auto L : seq_lens) {
    need(L <= target_max_len, fmt::format("seq_len {} exceeds the target's max_len {}", L, target_max_len));
    for (auto b : block_sizes)
      need(L >= b + 2, fmt::format("seq_len {} too short for block size {} (needs >= {})", L, b, b + 2));
  }
}

DraftBatch make_draft_batch(const data::Corpus& corpus, const DraftRunConfig& cfg, int64_t rank, int64_t step,
                            c10::Device device) {
  auto rng = Rng::derive(cfg.seed, static_cast<uint64_t>(rank) + 1, static_cast<uint64_t>(step));
  DraftBatch b;
  b.step = step;
  auto combo = step % static_cast<int64_t>(cfg.seq_lens.size() * cfg.block_sizes.size());
  b.seq_len = cfg.seq_lens[static_cast<size_t>(combo) % cfg.seq_lens.size()];
  b.block_size = cfg.block_sizes[static_cast<size_t>(combo) / cfg.seq_lens.size()];
  b.tokens = data::sample_windows(corpus.train, cfg.batch, b.seq_len, rng).to(device);
  // Anchors in [1, L-B]: at least one context position, and B-1 labels after it.
  std::vector<int64_t> pool;
  for (int64_t a = 1; a <= b.seq_len - b.block_size; ++a) pool.push_back(a);
  auto k = std::min<int64_t>(cfg.anchors, static_cast<int64_t>(pool.size()));
  for (int64_t i = 0; i < k; ++i)
    std::swap(pool[static_cast<size_t>(i)], pool[static_cast<size_t>(i + rng.below(static_cast<int64_t>(pool.size()) - i))]);
  b.anchors.assign(pool.begin(), pool.begin() + k);
  std::sort(b.anchors.begin(), b.anchors.end());
  return b;
}

DrafterPipeline::DrafterPipeline(std::shared_ptr<Target> target, const data::Corpus& corpus, const DrafterConfig& dcfg,
                                 const DraftRunConfig& cfg, const std::vector<int64_t>& ranks)
    : target_(std::move(target)), corpus_(corpus), dcfg_(dcfg), cfg_(cfg) {
  cfg_.validate(target_->config().max_len);
  for (auto b : cfg_.block_sizes)
    if (b > dcfg_.max_block) throw std::invalid_argument(fmt::format("block size {} exceeds max_block {}", b, dcfg_.max_block));
  for (auto r : ranks) {
    DraftWorker w;
    w.rank = r;
    w.drafter = std::make_unique<Drafter>(dcfg_, target_->config(), cfg_.seed * 1000003ULL + static_cast<uint64_t>(r));
    w.drafter->to(target_->device());  // before the optimizer takes its parameters
    w.optimizer = std::make_unique<AdamW>(w.drafter->params().trainable(), cfg_.adamw);
    workers_.push_back(std::move(w));
  }
}

double DrafterPipeline::lr_at(int64_t step) const {
  double base = cfg_.adamw.lr;
  if (step < cfg_.warmup) return base * static_cast<double>(step + 1) / static_cast<double>(cfg_.warmup);
  double t = static_cast<double>(step - cfg_.warmup) / static_cast<double>(std::max<int64_t>(1, cfg_.steps - cfg_.warmup));
  t = std::min(1.0, t);
  return base * (0.1 + 0.9 * 0.5 * (1.0 + std::cos(M_PI * t)));
}

double DrafterPipeline::train_step(DraftWorker& w, DraftBatch batch, MetricsLog* metrics) {
  if (!batch.taps.defined()) {
    at::NoGradGuard no_grad;
    batch.taps = target_->forward(batch.tokens).taps;
  }
  auto spec = MaskSpec::blocks(batch.seq_len, batch.anchors, batch.block_size);
  auto block_tokens = make_block_tokens(batch.tokens, batch.anchors, batch.block_size, corpus_.mask_token);
  auto labels = make_block_labels(batch.tokens, batch.anchors, batch.block_size);
  auto logits = w.drafter->forward(*target_, batch.taps, block_tokens, spec);
  auto out = weighted_block_loss(logits, labels, batch.block_size, dcfg_.gamma);
  w.optimizer->zero_grad();
  out.loss.backward();
  double lr = lr_at(batch.step);
  w.optimizer->set_lr(lr);
  w.optimizer->step();
  double loss = out.loss.item<double>();
  w.losses.push_back(loss);
  w.last_accuracy = out.accuracy;
  w.step = batch.step + 1;
  if (metrics != nullptr)
    metrics->write({{"event", "step"},
                    {"worker", w.rank},
                    {"step", w.step},
                    {"loss", loss},
                    {"accuracy", out.accuracy},
                    {"seq_len", batch.seq_len},
                    {"block_size", batch.block_size},
                    {"lr", lr}});
  return loss;
}

DraftRunStats DrafterPipeline::run(const DraftRunHooks& hooks) {
  DraftRunStats stats;
  const auto n = workers_.size();
  auto stop_requested = [&] { return hooks.stop != nullptr && hooks.stop->load(std::memory_order_relaxed); };

  std::vector<std::unique_ptr<BoundedQueue<DraftBatch>>> queues;
  for (size_t i = 0; i < n; ++i) queues.push_back(std::make_unique<BoundedQueue<DraftBatch>>(cfg_.queue_depth));
  std::vector<int64_t> session_end(n);
  int64_t remaining_total = 0;
  for (size_t i = 0; i < n; ++i) {
    auto end = cfg_.steps;
    if (cfg_.stop_after > 0) end = std::min(end, workers_[i].step + cfg_.stop_after);
    session_end[i] = std::max(end, workers_[i].step);
    remaining_total += session_end[i] - workers_[i].step;
  }

  if (hooks.single_thread) {
    auto t0 = std::chrono::steady_clock::now();
    Progress progress("drafters", remaining_total, hooks.progress ? stdout : nullptr);
    try {
      bool any = true;
      while (any && !stop_requested()) {
        any = false;
        for (size_t i = 0; i < n && !stop_requested(); ++i) {
          auto& w = workers_[i];
          if (w.step >= session_end[i]) continue;
          any = true;
          double loss = train_step(w, make_draft_batch(corpus_, cfg_, w.rank, w.step, target_->device()), hooks.metrics);
          ++stats.steps_done;
          double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          progress.update(stats.steps_done, secs > 0 ? stats.steps_done / secs : 0, loss);
        }
      }
    } catch (const std::exception& e) {
      stats.errors.push_back(std::string("worker: ") + e.what());
    }
    progress.finish();
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stats.steps_per_s = stats.seconds > 0 ? static_cast<double>(stats.steps_done) / stats.seconds : 0;
    for (auto& w : workers_)
      if (w.step < cfg_.steps) stats.interrupted = true;
    return stats;
  }

  racelab::Mutex mu{"pipeline.state"};
  racelab::CondVar changed;
  int64_t done_steps = 0;
  size_t finished = 0;
  double last_loss = 0;
  std::vector<std::string> errors;
  auto record_error = [&](const std::string& who, const std::string& what) {
    std::lock_guard<racelab::Mutex> lock(mu);
    errors.push_back(who + ": " + what);
  };

  auto t0 = std::chrono::steady_clock::now();
  racelab::Thread producer([&] {
    try {
      std::vector<int64_t> next(n);
      for (size_t i = 0; i < n; ++i) next[i] = workers_[i].step;
      bool any = true;
      while (any && !stop_requested()) {
        any = false;
        for (size_t i = 0; i < n && !stop_requested(); ++i) {
          if (next[i] < 0 || next[i] >= session_end[i]) continue;
          auto batch = make_draft_batch(corpus_, cfg_, workers_[i].rank, next[i], target_->device());
          {
            at::NoGradGuard no_grad;
            batch.taps = target_->forward(batch.tokens).taps;
          }
          if (queues[i]->push(std::move(batch)))
            ++next[i];
          else
            next[i] = -1;  // that worker stopped
          any = true;
        }
      }
    } catch (const std::exception& e) {
      record_error("producer", e.what());
    }
    for (auto& q : queues) q->close();
  });

  std::vector<racelab::Thread> threads;
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      auto& w = workers_[i];
      try {
        while (w.step < session_end[i] && !stop_requested()) {
          auto batch = queues[i]->pop();
          if (!batch) break;
          double loss = train_step(w, std::move(*batch), hooks.metrics);
          {
            std::lock_guard<racelab::Mutex> lock(mu);
            ++done_steps;
            last_loss = loss;
          }
          changed.notify_all();
        }
      } catch (const std::exception& e) {
        record_error(fmt::format("worker {}", w.rank), e.what());
      }
      queues[i]->close();
      {
        std::lock_guard<racelab::Mutex> lock(mu);
        ++finished;
      }
      changed.notify_all();
    });
  }

  if (hooks.progress) {
    Progress progress("drafters", remaining_total);
    std::unique_lock<racelab::Mutex> lock(mu);
    while (finished < n) {
      changed.wait_for(lock, std::chrono::milliseconds(250), [&] { return finished == n; });
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      progress.update(done_steps, secs > 0 ? static_cast<double>(done_steps) / secs : 0, last_loss);
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    progress.update(done_steps, secs > 0 ? static_cast<double>(done_steps) / secs : 0, last_loss, true);
    progress.finish();
  }
  for (auto& t : threads) t.join();
  producer.join();

  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stats.steps_done = done_steps;
  stats.steps_per_s = stats.seconds > 0 ? static_cast<double>(done_steps) / stats.seconds : 0;
  stats.errors = errors;
  for (auto& w : workers_)
    if (w.step < cfg_.steps) stats.interrupted = true;
  return stats;
}

void DrafterPipeline::save(const std::string& path, const nlohmann::json& identity) const {
  std::map<std::string, at::Tensor> tensors;
  nlohmann::json ranks = nlohmann::json::array(), steps = nlohmann::json::array();
  for (auto& w : workers_) {
    auto prefix = fmt::format("w{}.", w.rank);
    for (auto& [name, t] : w.drafter->params().items()) tensors[prefix + name] = t;
    tensors[prefix + "__optimizer"] = checkpoint::bytes_to_tensor(w.optimizer->save());
    ranks.push_back(w.rank);
    steps.push_back(w.step);
  }
  checkpoint::File f;
  f.meta = {{"kind", "drafters"}, {"identity", identity}, {"ranks", ranks}, {"steps", steps}};
  f.payload = checkpoint::save_tensors(tensors);
  checkpoint::write(path, f);
}

int64_t DrafterPipeline::load(const std::string& path, const nlohmann::json& identity, bool require_all_ranks) {
  auto f = checkpoint::read(path, "drafters");
  checkpoint::require_match(path, "run", f.meta.value("identity", nlohmann::json::object()), identity);
  auto file_ranks = f.meta.value("ranks", nlohmann::json::array());
  auto steps = f.meta.value("steps", nlohmann::json::array());
  if (!file_ranks.is_array() || !steps.is_array() || file_ranks.size() != steps.size())
    throw BadInput(fmt::format("checkpoint '{}': corrupt metadata: 'ranks' and 'steps' must be arrays of equal length", path));
  nlohmann::json ours = nlohmann::json::array();
  for (auto& w : workers_) ours.push_back(w.rank);
  if (require_all_ranks && file_ranks != ours)
    throw BadInput(fmt::format("checkpoint '{}': written for workers {}, this run has workers {}", path,
                               file_ranks.dump(), ours.dump()));
  auto tensors = checkpoint::load_tensors(f.payload, fmt::format("checkpoint '{}'", path));
  int64_t loaded = 0;
  for (auto& w : workers_) {
    size_t idx = file_ranks.size();
    for (size_t i = 0; i < file_ranks.size(); ++i)
      if (file_ranks[i].get<int64_t>() == w.rank) idx = i;
    if (idx == file_ranks.size()) continue;
    auto prefix = fmt::format("w{}.", w.rank);
    w.drafter->params().load(tensors, fmt::format("checkpoint '{}'", path), prefix);
    auto it = tensors.find(prefix + "__optimizer");
    if (it == tensors.end())
      throw BadInput(fmt::format("checkpoint '{}': optimizer state of worker {} missing", path, w.rank));
    w.optimizer->load(checkpoint::tensor_to_bytes(it->second));
    w.step = steps.at(idx).get<int64_t>();
    ++loaded;
  }
  return loaded;
}

}  // namespace racelab::trainer
