// Corpus determinism, structure, split, and the text loader's errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "tiny.h"
#include "trainer/data/corpus.h"
#include "trainer/util/errors.h"

namespace {

TEST(Corpus, SameSeedSameTokensDifferentSeedDifferent) {
  auto a = tiny::corpus(5), b = tiny::corpus(5), c = tiny::corpus(6);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.heldout, b.heldout);
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  EXPECT_NE(a.train, c.train);
  EXPECT_NE(a.fingerprint(), c.fingerprint());
}

TEST(Corpus, SplitVocabularyAndMaskToken) {
  auto c = tiny::corpus();
  EXPECT_EQ(c.train.size() + c.heldout.size(), 8192u);
  EXPECT_EQ(c.heldout.size(), 819u);
  EXPECT_EQ(c.mask_token, c.vocab_size - 1);
  for (auto t : c.train) ASSERT_TRUE(t >= 0 && t < c.mask_token);
}

TEST(Corpus, IsLowEntropyEnoughToLearn) {
  // Bigram conditional entropy well below log(vocab): there is structure to learn.
  auto c = tiny::corpus();
  std::map<std::pair<int64_t, int64_t>, double> pair;
  std::map<int64_t, double> first;
  for (size_t i = 0; i + 1 < c.train.size(); ++i) pair[{c.train[i], c.train[i + 1]}] += 1, first[c.train[i]] += 1;
  double h = 0, n = static_cast<double>(c.train.size() - 1);
  for (auto& [k, v] : pair) h -= v / n * std::log(v / first[k.first]);
  EXPECT_LT(h, 0.5 * std::log(64.0));
}

TEST(Corpus, SampleWindowsIsDeterministicPerSeed) {
  auto c = tiny::corpus();
  racelab::trainer::Rng r1(9), r2(9), r3(10);
  auto a = racelab::trainer::data::sample_windows(c.train, 3, 8, r1);
  EXPECT_TRUE(at::equal(a, racelab::trainer::data::sample_windows(c.train, 3, 8, r2)));
  EXPECT_FALSE(at::equal(a, racelab::trainer::data::sample_windows(c.train, 3, 8, r3)));
}

TEST(TextCorpus, BytesAreTokensAndErrorsNameTheFile) {
  auto dir = tiny::temp_dir("text");
  auto path = dir + "/t.txt";
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 2000; ++i) out << "ab\xff";
  }
  auto c = racelab::trainer::data::load_text_corpus(path, 0.1, 100);
  EXPECT_EQ(c.vocab_size, 257);
  EXPECT_EQ(c.train[0], 'a');
  EXPECT_EQ(c.train[2], 255);
  EXPECT_EQ(c.train.size() + c.heldout.size(), 6000u);
  try {
    racelab::trainer::data::load_text_corpus(dir + "/missing.txt");
    FAIL() << "no error";
  } catch (const racelab::trainer::BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("missing.txt"), std::string::npos) << e.what();
  }
  EXPECT_THROW(racelab::trainer::data::load_text_corpus(path, 0.1, 100000), racelab::trainer::BadInput);
}

}  // namespace
