// trainer/data/corpus.h -- token streams the target and the drafters learn from.
//
// Two sources:
//  - A seeded synthetic language. A vocabulary of multi-token "words" (each word
//    has its own first token; the rest of the word is fixed) is emitted by a
//    low-entropy Markov chain over words. After a word's first token the next
//    few tokens are determined, and the next word is usually predictable, so a
//    small target learns it quickly and a drafter has several tokens to guess.
//  - A plain-text file, tokenised byte by byte (vocabulary 256).
// Either way the stream is split into a training part and a held-out tail, and
// one extra token id (the last) is reserved as the drafter's mask token: it never
// occurs in the data.
#ifndef TRAINER_DATA_CORPUS_H_
#define TRAINER_DATA_CORPUS_H_

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "trainer/util/rng.h"

namespace racelab::trainer::data {

struct SyntheticSpec {
  uint64_t seed = 1234;
  int64_t data_vocab = 64;    // token ids 0..data_vocab-1 occur in the data
  int64_t words = 40;         // distinct words (<= data_vocab: each owns a first token)
  int64_t min_word_len = 2;
  int64_t max_word_len = 4;
  int64_t successors = 3;     // each word is followed by one of this many words
  double top_probability = 0.8;  // probability of the most likely successor
  int64_t tokens = 200000;
  double heldout_fraction = 0.1;
};

struct Corpus {
  std::string source;            // "synthetic(seed=...)" or the file path
  int64_t vocab_size = 0;        // data vocabulary + 1 (the mask token)
  int64_t mask_token = 0;        // == vocab_size - 1
  std::vector<int64_t> train;
  std::vector<int64_t> heldout;
  // FNV-1a over both streams: recorded in checkpoints to detect a different corpus.
  uint64_t fingerprint() const;
};

Corpus make_synthetic_corpus(const SyntheticSpec& spec);

// Throws racelab::trainer::BadInput naming the file when it cannot be read or is too short.
Corpus load_text_corpus(const std::string& path, double heldout_fraction = 0.1, int64_t min_tokens = 1024);

// `batch` windows of `seq_len` tokens at random offsets of `stream`: [batch, seq_len] int64.
at::Tensor sample_windows(const std::vector<int64_t>& stream, int64_t batch, int64_t seq_len, Rng& rng);

}  // namespace racelab::trainer::data

#endif  // TRAINER_DATA_CORPUS_H_
