// campaign/local_shards.h -- one campaign as n processes on this machine.
//
// `racelab compare -j n` runs `racelab <command> ... --shard k/n` for k = 1..n,
// each a child process in its own folder (out/shards/k, log.txt beside its
// results). The shards claim cells from one shared list, the costliest first
// (cell_claims.h), so neither core sits idle at the end; the caller merges the
// results files into one report.
#ifndef RACELAB_CAMPAIGN_LOCAL_SHARDS_H_
#define RACELAB_CAMPAIGN_LOCAL_SHARDS_H_

#include <cstddef>
#include <string>
#include <vector>

namespace racelab::campaign {

struct LocalShards {
  std::string command;             // "compare" or "ci": what each shard runs
  std::vector<std::string> paths;  // the scenario files or directories
  std::string out;                 // the campaign's folder: shards go to out/shards/k
  double budget_scale = 1.0;
  std::string torch;               // --torch for every shard ("" for none)
  int count = 2;                   // shards
  size_t total_cells = 0;          // for the progress line
  bool progress = false;           // a live progress line on stderr, read from the results files
};

// A local shard's environment: the campaign parent's pid (engine/child_process.h).
inline constexpr const char* kShardParentPidEnv = "RACELAB_SHARD_PARENT";

// In a local shard, first thing: the kernel sends it SIGTERM when the parent
// dies, even by SIGKILL, and it stops as for a Ctrl-C, leaving a valid results
// file, instead of running on alone. False when the parent is gone already
// (then exit).
bool stop_with_parent();

// Runs the shards to their end and returns their results files. A Ctrl-C
// reaches the children too (same process group), and an interrupt of this
// process alone is passed on; each shard leaves a valid, perhaps partial,
// results file. Throws std::runtime_error when a shard cannot be started.
// `exit_codes`, when given, gets each shard's exit code (128 + N for a signal).
std::vector<std::string> run_local_shards(const LocalShards& shards, std::vector<int>* exit_codes = nullptr);

}  // namespace racelab::campaign

#endif  // RACELAB_CAMPAIGN_LOCAL_SHARDS_H_
