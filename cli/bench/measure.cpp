// cli/bench/measure.cpp -- what every section measures with (see bench.h).
#include "cli/bench/bench.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include <fmt/format.h>

namespace racelab::cli::bench {

CellRun run(racelab::CellSpec spec) {
  CellRun out;
  spec.scenario = "bench";
  out.summary = racelab::run_cell(spec, [&](const racelab::TrialRecord& r) { out.records.push_back(r); });
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
}
double peak_rss_mb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return NAN;
}

std::string fmt_num(double v, int digits) { return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : "n/a"; }

}  // namespace racelab::cli::bench
