#include "engine/trial_plan.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "engine/driver.h"

namespace racelab {

bool is_one_sequence(const std::string& strategy) {
  try {
    return parse_strategy(strategy).exhaustive();
  } catch (...) {
    return false;  // not a strategy: run_cell refuses it with its own message
  }
}

int64_t block_of(int64_t trial, bool one_sequence) { return one_sequence ? 0 : trial / kTrialBlock; }

bool part_runs(const CellPart& part, int64_t trial, bool one_sequence) {
  if (part.count <= 1) return true;
  const uint64_t b = static_cast<uint64_t>(block_of(trial, one_sequence));
  return static_cast<int>((part.offset + b) % static_cast<uint64_t>(part.count)) == part.index;
}

bool part_has_trials(const CellPart& part, int64_t max_trials, bool one_sequence) {
  if (part.count <= 1) return true;
  // The blocks 0..blocks-1 go to parts offset, offset+1, ... (mod count): this
  // part has one when its distance from the offset is below the block count.
  const uint64_t n = static_cast<uint64_t>(part.count);
  const uint64_t distance = (static_cast<uint64_t>(part.index) + n - part.offset % n) % n;
  return static_cast<int64_t>(distance) < parts_with_trials(part, max_trials, one_sequence);
}

int parts_with_trials(const CellPart& part, int64_t max_trials, bool one_sequence) {
  if (part.count <= 1 || max_trials <= 0) return 1;
  const int64_t blocks = one_sequence ? 1 : (max_trials + kTrialBlock - 1) / kTrialBlock;
  return static_cast<int>(std::min<int64_t>(blocks, part.count));
}

std::string add_up_portfolio_notes(const std::vector<std::string>& notes) {
  const std::string head = "auto:", tail = " (failures/trials per strategy)";
  std::vector<std::string> arms;  // in the notes' order
  std::map<std::string, std::pair<long long, long long>> sums;
  for (const std::string& note : notes) {
    if (note.rfind(head, 0) != 0 || note.size() < head.size() + tail.size() ||
        note.compare(note.size() - tail.size(), tail.size(), tail) != 0)
      return "";
    std::istringstream in(note.substr(head.size(), note.size() - head.size() - tail.size()));
    std::string arm, ratio;
    while (in >> arm >> ratio) {
      long long f = 0, t = 0;
      if (std::sscanf(ratio.c_str(), "%lld/%lld", &f, &t) != 2) return "";
      if (sums.count(arm) == 0) arms.push_back(arm);
      sums[arm].first += f;
      sums[arm].second += t;
    }
  }
  if (arms.empty()) return "";
  std::string out = head;
  for (const std::string& a : arms) out += fmt::format(" {} {}/{}", a, sums[a].first, sums[a].second);
  return out + tail;
}

}  // namespace racelab
