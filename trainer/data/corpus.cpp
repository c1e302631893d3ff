#include "trainer/data/corpus.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "trainer/util/errors.h"

namespace racelab::trainer::data {
namespace {

void split(const std::vector<int64_t>& all, double heldout_fraction, Corpus& out) {
  auto held = static_cast<size_t>(static_cast<double>(all.size()) * heldout_fraction);
  held = std::max<size_t>(held, 1);
  out.train.assign(all.begin(), all.end() - static_cast<std::ptrdiff_t>(held));
  out.heldout.assign(all.end() - static_cast<std::ptrdiff_t>(held), all.end());
}

}  // namespace

uint64_t Corpus::fingerprint() const {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](int64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint64_t>(v >> (8 * i)) & 0xFF;
      h *= 1099511628211ULL;
    }
  };
  mix(vocab_size);
  for (auto t : train) mix(t);
  mix(-1);
  for (auto t : heldout) mix(t);
  return h;
}

Corpus make_synthetic_corpus(const SyntheticSpec& spec) {
  if (spec.words < 1 || spec.words > spec.data_vocab)
    throw std::invalid_argument(fmt::format("synthetic corpus: words must be in [1, data_vocab={}], got {}",
                                            spec.data_vocab, spec.words));
  if (spec.min_word_len < 1 || spec.max_word_len < spec.min_word_len)
    throw std::invalid_argument("synthetic corpus: need 1 <= min_word_len <= max_word_len");
  Rng rng(spec.seed);

  // Words: a distinct first token each (a shuffled prefix of the vocabulary),
  // then a fixed random continuation.
  std::vector<int64_t> firsts(static_cast<size_t>(spec.data_vocab));
  std::iota(firsts.begin(), firsts.end(), 0);
  for (size_t i = firsts.size() - 1; i > 0; --i) std::swap(firsts[i], firsts[static_cast<size_t>(rng.below(i + 1))]);
  std::vector<std::vector<int64_t>> words(static_cast<size_t>(spec.words));
  for (int64_t w = 0; w < spec.words; ++w) {
    auto len = spec.min_word_len + rng.below(spec.max_word_len - spec.min_word_len + 1);
    auto& word = words[static_cast<size_t>(w)];
    word.push_back(firsts[static_cast<size_t>(w)]);
    while (static_cast<int64_t>(word.size()) < len) word.push_back(rng.below(spec.data_vocab));
  }

  // Markov chain over words: `successors` choices, the first with
  // top_probability, the rest sharing what is left with halving weights.
  std::vector<std::vector<int64_t>> next(static_cast<size_t>(spec.words));
  std::vector<double> probs;
  {
    double rest = 1.0 - spec.top_probability, share = 0, w = 1;
    probs.push_back(spec.top_probability);
    for (int64_t i = 1; i < spec.successors; ++i, w /= 2) share += w;
    w = 1;
    for (int64_t i = 1; i < spec.successors; ++i, w /= 2) probs.push_back(rest * w / share);
  }
  for (auto& n : next)
    for (int64_t i = 0; i < spec.successors; ++i) n.push_back(rng.below(spec.words));

  std::vector<int64_t> all;
  all.reserve(static_cast<size_t>(spec.tokens));
  int64_t current = rng.below(spec.words);
  while (static_cast<int64_t>(all.size()) < spec.tokens) {
    for (auto t : words[static_cast<size_t>(current)]) all.push_back(t);
    double u = rng.uniform(), acc = 0;
    size_t pick = probs.size() - 1;
    for (size_t i = 0; i < probs.size(); ++i) {
      acc += probs[i];
      if (u < acc) {
        pick = i;
        break;
      }
    }
    current = next[static_cast<size_t>(current)][pick];
  }
  all.resize(static_cast<size_t>(spec.tokens));

  Corpus c;
  c.source = fmt::format("synthetic(seed={}, vocab={}, words={}, tokens={})", spec.seed, spec.data_vocab, spec.words,
                         spec.tokens);
  c.vocab_size = spec.data_vocab + 1;
  c.mask_token = spec.data_vocab;
  split(all, spec.heldout_fraction, c);
  return c;
}

Corpus load_text_corpus(const std::string& path, double heldout_fraction, int64_t min_tokens) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(fmt::format("data file '{}': cannot open for reading", path));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw BadInput(fmt::format("data file '{}': read error", path));
  if (static_cast<int64_t>(bytes.size()) < min_tokens)
    throw BadInput(fmt::format("data file '{}': {} bytes, expected at least {} (one token per byte)", path,
                               bytes.size(), min_tokens));
  std::vector<int64_t> all(bytes.size());
  std::transform(bytes.begin(), bytes.end(), all.begin(), [](char b) { return static_cast<int64_t>(static_cast<uint8_t>(b)); });
  Corpus c;
  c.source = path;
  c.vocab_size = 257;
  c.mask_token = 256;
  split(all, heldout_fraction, c);
  return c;
}

at::Tensor sample_windows(const std::vector<int64_t>& stream, int64_t batch, int64_t seq_len, Rng& rng) {
  auto n = static_cast<int64_t>(stream.size());
  if (n < seq_len + 1)
    throw std::invalid_argument(fmt::format("stream of {} tokens is shorter than seq_len {}", n, seq_len));
  auto out = at::empty({batch, seq_len}, at::kLong);
  auto* p = out.data_ptr<int64_t>();
  for (int64_t b = 0; b < batch; ++b) {
    auto off = rng.below(n - seq_len + 1);
    std::copy_n(stream.begin() + off, seq_len, p + b * seq_len);
  }
  return out;
}

}  // namespace racelab::trainer::data
