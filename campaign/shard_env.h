// campaign/shard_env.h -- `--shard auto`: the shard a job scheduler started
// this process as, read from the variables it sets.
//
//   RACELAB_SHARD=i/n                      any scheduler, or a CI matrix (1-based i)
//   SLURM_ARRAY_TASK_ID, _MIN, _COUNT      a Slurm job array (--array=MIN-MAX):
//                                          shard ID-MIN+1 of COUNT
//   JOB_COMPLETION_INDEX + RACELAB_SHARD_COUNT
//                                          a Kubernetes Indexed Job (0-based
//                                          index; the count is the Job's
//                                          `completions`, given with it)
//
// Looked for in that order; the first that is set decides, and a set one that
// does not make sense is an error naming it (never a silent fall-through to
// another). A Slurm array with a step (--array=0-9:2) numbers its tasks with
// gaps, which no i/n describes: refused, naming the variables.
#ifndef RACELAB_CAMPAIGN_SHARD_ENV_H_
#define RACELAB_CAMPAIGN_SHARD_ENV_H_

#include <functional>
#include <string>

#include "campaign/matrix.h"

namespace racelab::campaign {

// getenv, or a test's table: nullptr for a variable that is not set.
using EnvLookup = std::function<const char*(const char*)>;

// Fills *shard from the environment and returns ""; or returns why it cannot
// (none of the variables set: what it looked for; one set but malformed: which).
std::string shard_from_environment(const EnvLookup& env, Shard* shard);

}  // namespace racelab::campaign

#endif  // RACELAB_CAMPAIGN_SHARD_ENV_H_
