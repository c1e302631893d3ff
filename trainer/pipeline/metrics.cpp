#include "trainer/pipeline/metrics.h"

#include <unistd.h>

#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

namespace racelab::trainer {

MetricsLog::MetricsLog(const std::string& path, bool append)
    : out_(std::make_unique<racelab::JsonlWriter>(
          path, append ? racelab::JsonlWriter::Mode::kAppend : racelab::JsonlWriter::Mode::kTruncate)) {}

void MetricsLog::write(const nlohmann::json& record) {
  if (out_ == nullptr) return;
  std::lock_guard<racelab::Mutex> lock(mu_);
  out_->write(record);
}

Progress::Progress(std::string label, int64_t total, std::FILE* out, double plain_interval_s)
    : label_(std::move(label)),
      total_(total),
      out_(out),
      tty_(out != nullptr && ::isatty(::fileno(out))),
      plain_interval_s_(plain_interval_s),
      last_(std::chrono::steady_clock::now()) {}

void Progress::update(int64_t done, double steps_per_s, double loss, bool force) {
  if (out_ == nullptr) return;
  auto now = std::chrono::steady_clock::now();
  double since = std::chrono::duration<double>(now - last_).count();
  if (!tty_ && !force && printed_ && since < plain_interval_s_) return;
  last_ = now;
  printed_ = true;
  double eta = steps_per_s > 0 ? static_cast<double>(total_ - done) / steps_per_s : 0;
  auto line = fmt::format("[{}] step {}/{} ({:.0f}%)  {:.1f} steps/s  loss {:.4f}  ETA {:.0f}s", label_, done, total_,
                          total_ > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0,
                          steps_per_s, loss, eta);
  if (tty_)
    std::fprintf(out_, "\r%s\033[K", line.c_str());
  else
    std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void Progress::finish() {
  if (out_ != nullptr && tty_ && printed_) std::fprintf(out_, "\n");
}

}  // namespace racelab::trainer
