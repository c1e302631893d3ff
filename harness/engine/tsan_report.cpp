#include "engine/tsan_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#if defined(__SANITIZE_THREAD__)
#define RACELAB_HAS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RACELAB_HAS_TSAN 1
#endif
#endif

namespace racelab {

namespace {
std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r");
  size_t b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}
}  // namespace

bool TsanParser::feed(const std::string& line) {
  if (!in_report_) {
    if (line.find("WARNING: ThreadSanitizer:") == std::string::npos) return false;
    in_report_ = true;
    is_race_ = line.find("data race") != std::string::npos;
    want_frame_ = false;
    current_ = TsanRace{};
    return true;
  }
  std::string t = trim(line);
  if (!t.empty() && t.find_first_not_of('=') == std::string::npos) {  // end of report
    if (is_race_) races_.push_back(current_);
    in_report_ = false;
    return true;
  }
  if (t.rfind("SUMMARY: ThreadSanitizer:", 0) == 0) {
    current_.summary = trim(t.substr(std::string("SUMMARY: ThreadSanitizer:").size()));
  } else if (t.find(" by thread ") != std::string::npos || t.find(" by main thread") != std::string::npos ||
             t.rfind("Previous ", 0) == 0 || t.rfind("Read of", 0) == 0 || t.rfind("Write of", 0) == 0 ||
             t.rfind("Atomic ", 0) == 0) {
    want_frame_ = true;
  } else if (want_frame_ && t.rfind("#0 ", 0) == 0) {
    current_.frames.push_back(trim(t.substr(3)));
    want_frame_ = false;
  }
  return true;
}

void note_tsan_races(const std::vector<TsanRace>& races, TrialResult* r) {
  if (races.empty()) return;
  nlohmann::json reports = nlohmann::json::array();
  for (const auto& race : races) reports.push_back({{"summary", race.summary}, {"frames", race.frames}});
  r->metrics["tsan_reports"] = reports;
  if (outcome_rank(Outcome::kDataRace) <= outcome_rank(r->outcome)) return;
  const TsanRace& first = races.front();
  std::string frames;
  for (size_t i = 0; i < first.frames.size() && i < 2; ++i) frames += (i ? " | " : "") + first.frames[i];
  r->outcome = Outcome::kDataRace;
  r->detail = fmt::format("{} ({} report(s)); top frames: {}", first.summary, races.size(), frames);
  r->failing_step = r->steps;
}

bool built_with_tsan() {
#ifdef RACELAB_HAS_TSAN
  return true;
#else
  return false;
#endif
}

}  // namespace racelab
