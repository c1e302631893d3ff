// racelab/atomic_file.h and racelab/jsonl.h: the files every layer writes.
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "racelab/atomic_file.h"
#include "racelab/jsonl.h"

namespace {

namespace fs = std::filesystem;

std::string temp_dir() {
  std::string templ = (fs::temp_directory_path() / "racelab-files-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return templ;
}

// A full disk without a mount: writes past `bytes` fail with EFBIG (after a
// short write for the one that crosses the limit), as they fail with ENOSPC on
// a full file system. Process-wide while it lives.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_);
    old_xfsz_ = std::signal(SIGXFSZ, SIG_IGN);  // else the process dies instead of getting EFBIG
    rlimit lim = old_;
    lim.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &lim);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_xfsz_);
  }

 private:
  rlimit old_{};
  void (*old_xfsz_)(int) = nullptr;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(AtomicFile, ReplacesContentAndLeavesNoTemporary) {
  const auto dir = temp_dir();
  const std::string path = dir + "/r.json";
  racelab::write_file_atomically(path, "one");
  racelab::write_file_atomically(path, "two");
  EXPECT_EQ(slurp(path), "two");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  fs::remove_all(dir);
}

TEST(AtomicFile, WritesPiecesInOrder) {
  const auto dir = temp_dir();
  const std::string path = dir + "/pieces.bin";
  const std::string binary("a\0b", 3);
  racelab::write_file_atomically(path, {"head:", binary, ":tail"});
  EXPECT_EQ(slurp(path), "head:" + binary + ":tail");
  fs::remove_all(dir);
}

TEST(AtomicFile, ReportsAMissingDirectory) {
  const auto dir = temp_dir();
  const std::string path = dir + "/no/such/dir/x";
  try {
    racelab::write_file_atomically(path, "x");
    FAIL() << "wrote into a missing directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ".tmp"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(AtomicFile, AFailedRenameKeepsTheOldFileAndRemovesTheTemporary) {
  const auto dir = temp_dir();
  // A non-empty directory cannot be replaced by a file: the rename fails after
  // the temporary was written and synced.
  const std::string path = dir + "/occupied";
  fs::create_directories(path + "/inside");
  try {
    racelab::write_file_atomically(path, "new");
    FAIL() << "renamed a file over a non-empty directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("rename"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(path + "/inside"));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  fs::remove_all(dir);
}

TEST(AtomicFile, AFullDiskKeepsTheOldFileAndRemovesTheTemporary) {
  const auto dir = temp_dir();
  const std::string path = dir + "/report.json";
  racelab::write_file_atomically(path, "old");
  {
    FileSizeLimit full(1000);
    EXPECT_THROW(racelab::write_file_atomically(path, std::string(5000, 'x')), std::runtime_error);
  }
  EXPECT_EQ(slurp(path), "old");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  fs::remove_all(dir);
}

TEST(Jsonl, AFailedWriteLeavesOnlyWholeLines) {
  const auto dir = temp_dir();
  const std::string path = dir + "/results.jsonl";
  racelab::JsonlWriter w(path, racelab::JsonlWriter::Mode::kTruncate);
  w.write({{"a", 1}});
  {
    FileSizeLimit full(3000);
    // Crosses the limit: the kernel takes part of it, then refuses the rest.
    try {
      w.write({{"big", std::string(8000, 'x')}});
      FAIL() << "wrote past a full disk";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    EXPECT_EQ(slurp(path), "{\"a\":1}\n") << "a torn line was left behind";
    w.write({{"b", 2}});  // room again for a small one: it follows the last whole line
  }
  EXPECT_EQ(slurp(path), "{\"a\":1}\n{\"b\":2}\n");
  fs::remove_all(dir);
}

TEST(Jsonl, AppendingCutsATornLastLineFirst) {
  const auto dir = temp_dir();
  const std::string path = dir + "/results.jsonl";
  std::ofstream(path) << "{\"a\":1}\n{\"b\":";  // a writer killed mid-line
  racelab::JsonlWriter w(path);
  EXPECT_EQ(w.repaired_bytes(), 5);
  w.write({{"c", true}});
  EXPECT_EQ(slurp(path), "{\"a\":1}\n{\"c\":true}\n");
  fs::remove_all(dir);
}

TEST(Jsonl, AppendsOneLinePerRecordAndTruncatesOnRequest) {
  const auto dir = temp_dir();
  const std::string path = dir + "/x.jsonl";
  {
    racelab::JsonlWriter w(path, racelab::JsonlWriter::Mode::kTruncate);
    w.write({{"a", 1}});
    // Invalid UTF-8 from a workload's message is replaced, not thrown on.
    w.write({{"b", std::string("\xff")}});
    w.sync();
  }
  EXPECT_EQ(slurp(path), "{\"a\":1}\n{\"b\":\"\xef\xbf\xbd\"}\n");
  {
    racelab::JsonlWriter w(path);  // append
    w.write({{"c", true}});
  }
  EXPECT_EQ(slurp(path), "{\"a\":1}\n{\"b\":\"\xef\xbf\xbd\"}\n{\"c\":true}\n");
  {
    racelab::JsonlWriter w(path, racelab::JsonlWriter::Mode::kTruncate);
  }
  EXPECT_EQ(slurp(path), "");
  EXPECT_THROW(racelab::JsonlWriter(dir + "/no/such/dir/x.jsonl"), std::runtime_error);
  fs::remove_all(dir);
}

}  // namespace
