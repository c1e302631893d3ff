// engine/jsonl.h -- an append-only JSONL file: every record is written and
// flushed to the kernel as it finishes, so a killed run loses nothing finished.
#ifndef RACELAB_ENGINE_JSONL_H_
#define RACELAB_ENGINE_JSONL_H_

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace racelab {

class JsonlWriter {
 public:
  // Opens `path` for appending; throws std::runtime_error naming the path.
  explicit JsonlWriter(const std::string& path);
  ~JsonlWriter();
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;
  void write(const nlohmann::json& record);  // one line, flushed

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
};

}  // namespace racelab

#endif  // RACELAB_ENGINE_JSONL_H_
