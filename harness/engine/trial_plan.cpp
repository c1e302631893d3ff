#include "engine/trial_plan.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "engine/driver.h"

namespace racelab {

int64_t trial_block(const std::string& strategy) {
  StrategyName sn;
  try {
    sn = parse_strategy(strategy);
  } catch (...) {
    return 1;
  }
  if (sn.exhaustive()) return 0;
  switch (sn.kind) {
    case StrategyName::Kind::kPct:
    case StrategyName::Kind::kSurw:
    case StrategyName::Kind::kAuto:
      return kLearningBlock;
    default:
      return 1;
  }
}

int64_t block_of(int64_t trial, int64_t block) { return block <= 0 ? 0 : trial / block; }

bool part_runs(const CellPart& part, int64_t trial, int64_t block) {
  if (part.count <= 1) return true;
  const uint64_t b = static_cast<uint64_t>(block_of(trial, block));
  return static_cast<int>((part.offset + b) % static_cast<uint64_t>(part.count)) == part.index;
}

bool part_has_trials(const CellPart& part, int64_t max_trials, int64_t block) {
  if (part.count <= 1) return true;
  // The blocks 0..blocks-1 go to parts offset, offset+1, ... (mod count): this
  // part has one when its distance from the offset is below the block count.
  const uint64_t n = static_cast<uint64_t>(part.count);
  const uint64_t distance = (static_cast<uint64_t>(part.index) + n - part.offset % n) % n;
  return static_cast<int64_t>(distance) < parts_with_trials(part, max_trials, block);
}

int parts_with_trials(const CellPart& part, int64_t max_trials, int64_t block) {
  if (part.count <= 1 || max_trials <= 0) return 1;
  const int64_t blocks = block <= 0 ? 1 : (max_trials + block - 1) / block;
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
