// racelab/jsonl.h -- a JSON Lines file: one JSON object per line.
//
// Every record is written with one call and flushed to the kernel as it
// finishes, so a killed run loses at most the line in flight; readers skip a
// torn last line. The one writer of results.jsonl, `racelab run --results` and
// the trainer's metrics.jsonl.
#ifndef RACELAB_JSONL_H_
#define RACELAB_JSONL_H_

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace racelab {

class JsonlWriter {
 public:
  enum class Mode { kAppend, kTruncate };
  // Opens `path`; throws std::runtime_error naming the path.
  explicit JsonlWriter(const std::string& path, Mode mode = Mode::kAppend);
  ~JsonlWriter();
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;

  // One line, flushed. Invalid UTF-8 in strings is replaced, never thrown on:
  // a message from a crashing workload must not stop the run that records it.
  // Throws std::runtime_error naming the path when the write fails. Not
  // synchronised: callers that share a writer between threads lock around it.
  void write(const nlohmann::json& record);
  // fsync: the lines so far survive a power loss too. Throws like write().
  void sync();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
};

}  // namespace racelab

#endif  // RACELAB_JSONL_H_
