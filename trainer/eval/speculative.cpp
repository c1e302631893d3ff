#include "trainer/eval/speculative.h"
#include "compile/torch_compat.h"

#include <chrono>
#include <stdexcept>

#include <fmt/format.h>

namespace racelab::trainer {
namespace {

// [1, max_len] padded copy of `seq`, on `device` (built on the CPU, copied once).
at::Tensor padded(const std::vector<int64_t>& seq, int64_t max_len, int64_t pad, c10::Device device) {
  auto t = at::full({1, max_len}, pad, at::kLong);
  auto* p = t.data_ptr<int64_t>();
  std::copy(seq.begin(), seq.end(), p);
  return t.to(device);
}

int64_t argmax_at(const at::Tensor& logits, int64_t pos) { return logits[0][pos].argmax().item<int64_t>(); }

}  // namespace

std::vector<int64_t> greedy_generate(Target& target, const std::vector<int64_t>& prompt, int64_t new_tokens,
                                     int64_t pad_token) {
  at::NoGradGuard no_grad;
  const auto L = target.config().max_len;
  if (static_cast<int64_t>(prompt.size()) + new_tokens > L)
    throw std::invalid_argument(fmt::format("greedy: prompt {} + {} new tokens exceed max_len {}", prompt.size(), new_tokens, L));
  auto seq = prompt;
  for (int64_t i = 0; i < new_tokens; ++i) {
    auto logits = target.forward(padded(seq, L, pad_token, target.device())).logits;
    seq.push_back(argmax_at(logits, static_cast<int64_t>(seq.size()) - 1));
  }
  return {seq.begin() + static_cast<std::ptrdiff_t>(prompt.size()), seq.end()};
}

std::vector<int64_t> speculative_generate(Target& target, Drafter* drafter, const std::vector<int64_t>& prompt,
                                          int64_t new_tokens, int64_t block_size, int64_t mask_token, SpecStats& stats) {
  at::NoGradGuard no_grad;
  const auto L = target.config().max_len;
  if (static_cast<int64_t>(prompt.size()) + new_tokens + block_size > L)
    throw std::invalid_argument(fmt::format("speculative: prompt {} + {} new tokens + block {} exceed max_len {}",
                                            prompt.size(), new_tokens, block_size, L));
  auto seq = prompt;
  // Prefill: the target's first token becomes the first anchor.
  auto out = target.forward(padded(seq, L, mask_token, target.device()));
  seq.push_back(argmax_at(out.logits, static_cast<int64_t>(seq.size()) - 1));
  const auto goal = static_cast<int64_t>(prompt.size()) + new_tokens;
  while (static_cast<int64_t>(seq.size()) < goal) {
    const auto anchor = static_cast<int64_t>(seq.size()) - 1;
    std::vector<int64_t> drafts;
    if (drafter != nullptr) {
      // out.taps holds valid hidden states for every position < anchor.
      auto spec = MaskSpec::blocks(L, {anchor}, block_size);
      std::vector<int64_t> block_ids(static_cast<size_t>(block_size), mask_token);
      block_ids[0] = seq.back();
      auto block = at::tensor(block_ids, at::kLong).view({1, block_size}).to(target.device());
      auto logits = drafter->forward(target, out.taps, block, spec);
      auto guesses = logits[0].slice(0, 1).argmax(-1).cpu();  // positions 1..B-1, one copy off the device
      for (int64_t k = 0; k < block_size - 1; ++k) drafts.push_back(guesses[k].item<int64_t>());
    }
    auto candidate = seq;
    candidate.insert(candidate.end(), drafts.begin(), drafts.end());
    out = target.forward(padded(candidate, L, mask_token, target.device()));
    auto verified = out.logits[0].argmax(-1).cpu();  // the target's choice at every position, one copy
    auto target_at = [&](size_t m) { return verified[anchor + static_cast<int64_t>(m)].item<int64_t>(); };
    size_t m = 0;
    while (m < drafts.size() && drafts[m] == target_at(m)) ++m;
    for (size_t i = 0; i < m; ++i) seq.push_back(drafts[i]);
    seq.push_back(target_at(m));
    stats.verify_steps += 1;
    stats.accepted_tokens += static_cast<int64_t>(m) + 1;
  }
  seq.resize(static_cast<size_t>(goal));
  return {seq.begin() + static_cast<std::ptrdiff_t>(prompt.size()), seq.end()};
}

nlohmann::json EvalResult::to_json() const {
  return {{"tau", tau},
          {"verify_steps", verify_steps},
          {"prompts", prompts},
          {"lossless_prompts", lossless_prompts},
          {"lossless", lossless()},
          {"speculative_seconds", speculative_seconds},
          {"greedy_seconds", greedy_seconds}};
}

std::vector<EvalResult> evaluate(Target& target, const std::vector<Drafter*>& drafters, const data::Corpus& corpus,
                                 const EvalConfig& cfg) {
  std::vector<EvalResult> results(drafters.size());
  std::vector<SpecStats> stats(drafters.size());
  auto rng = Rng::derive(cfg.seed, 0xE7A1, 1);
  for (int64_t p = 0; p < cfg.prompts; ++p) {
    auto window = data::sample_windows(corpus.heldout, 1, cfg.prompt_len, rng);
    std::vector<int64_t> prompt(window.data_ptr<int64_t>(), window.data_ptr<int64_t>() + cfg.prompt_len);
    auto t0 = std::chrono::steady_clock::now();
    auto greedy = greedy_generate(target, prompt, cfg.new_tokens, corpus.mask_token);
    double greedy_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (size_t d = 0; d < drafters.size(); ++d) {
      auto t1 = std::chrono::steady_clock::now();
      auto spec = speculative_generate(target, drafters[d], prompt, cfg.new_tokens, cfg.block_size, corpus.mask_token,
                                       stats[d]);
      results[d].speculative_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
      results[d].greedy_seconds += greedy_s;
      results[d].prompts += 1;
      if (spec == greedy) results[d].lossless_prompts += 1;
    }
  }
  for (size_t d = 0; d < drafters.size(); ++d) {
    results[d].tau = stats[d].tau();
    results[d].verify_steps = stats[d].verify_steps;
  }
  return results;
}

}  // namespace racelab::trainer
