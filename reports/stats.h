// reports/stats.h -- the statistics every report shares.
#ifndef RACELAB_REPORTS_STATS_H_
#define RACELAB_REPORTS_STATS_H_

#include <algorithm>
#include <cstdint>

namespace racelab::reports {

struct Interval {
  double low;
  double high;
};

// 95% (z = 1.96) Wilson score interval for a failure rate. Unlike the normal
// approximation it stays inside [0, 1] and is honest at 0 of n failures, which
// is exactly the "holds over 500 trials" case.
Interval wilson_interval(int64_t failures, int64_t trials, double z = 1.96);

}  // namespace racelab::reports

#endif  // RACELAB_REPORTS_STATS_H_
