// trainer/pipeline/metrics.h -- the metrics JSONL file and the progress line.
//
// MetricsLog appends one JSON object per line (steps, evaluations), from any
// thread, through racelab::JsonlWriter: flushed per line, so a killed run keeps
// what it logged.
// Progress prints "step, steps/s, loss, ETA": a line rewritten in place on a
// terminal, plain lines (at most one per `plain_interval_s`) otherwise.
#ifndef TRAINER_PIPELINE_METRICS_H_
#define TRAINER_PIPELINE_METRICS_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "racelab/jsonl.h"
#include "racelab/sync.h"

namespace racelab::trainer {

class MetricsLog {
 public:
  MetricsLog() = default;  // disabled: write() does nothing
  // Appends (resume) or truncates; throws std::runtime_error naming the file.
  MetricsLog(const std::string& path, bool append);
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;
  // Throws std::runtime_error naming the file when the line cannot be written.
  void write(const nlohmann::json& record);
  bool enabled() const { return out_ != nullptr; }

 private:
  racelab::Mutex mu_{"metrics.lock"};
  std::unique_ptr<racelab::JsonlWriter> out_;
};

class Progress {
 public:
  Progress(std::string label, int64_t total, std::FILE* out = stdout, double plain_interval_s = 5.0);
  // `done` of `total`, at `steps_per_s`, latest loss.
  void update(int64_t done, double steps_per_s, double loss, bool force = false);
  void finish();  // ends the in-place line

 private:
  std::string label_;
  int64_t total_;
  std::FILE* out_;
  bool tty_;
  double plain_interval_s_;
  std::chrono::steady_clock::time_point last_;
  bool printed_ = false;
};

}  // namespace racelab::trainer

#endif  // TRAINER_PIPELINE_METRICS_H_
