// racelab/jsonl.h -- a JSON Lines file: one JSON object per line.
//
// A line is either in the file whole or not at all:
//  - every record goes to the kernel with one write(2) of the whole line (a
//    short write is continued, so only a kill in between can split it);
//  - when a write fails (a full disk, a quota), the file is cut back to the end
//    of the previous line before the error is thrown;
//  - opening for append first cuts a torn last line left by a killed writer,
//    so the next record never lands glued onto a fragment.
// Readers still skip and report a torn last line (a SIGKILL between the two
// halves of a short write). One writer per file. Used for results.jsonl,
// `racelab run --results` and the trainer's metrics.jsonl.
#ifndef RACELAB_JSONL_H_
#define RACELAB_JSONL_H_

#include <sys/types.h>

#include <string>

#include <nlohmann/json.hpp>

namespace racelab {

class JsonlWriter {
 public:
  enum class Mode { kAppend, kTruncate };
  // Opens `path`; throws FileError (racelab/file_error.h) naming the path.
  explicit JsonlWriter(const std::string& path, Mode mode = Mode::kAppend);
  ~JsonlWriter();
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;

  // One line. Invalid UTF-8 in strings is replaced, never thrown on: a message
  // from a crashing workload must not stop the run that records it. Throws
  // FileError naming the path and the system's reason when the line cannot be
  // written whole (the file then ends with the previous line). Not
  // synchronised: callers that share a writer between threads lock around it.
  void write(const nlohmann::json& record);
  // fsync: the lines so far survive a power loss too. Throws like write().
  void sync();
  const std::string& path() const { return path_; }
  // Bytes cut from a torn last line when the file was opened (0: none).
  off_t repaired_bytes() const { return repaired_; }

 private:
  std::string path_;
  int fd_ = -1;
  off_t end_ = 0;       // the end of the last whole line
  off_t repaired_ = 0;
};

}  // namespace racelab

#endif  // RACELAB_JSONL_H_
