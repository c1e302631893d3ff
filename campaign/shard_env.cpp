#include "campaign/shard_env.h"

#include <cstdlib>
#include <optional>

#include <fmt/format.h>

namespace racelab::campaign {
namespace {

// A whole decimal number, or nothing.
std::optional<long> whole(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end != '\0') return std::nullopt;
  return v;
}

}  // namespace

std::string shard_from_environment(const EnvLookup& env, Shard* shard) {
  if (const char* s = env("RACELAB_SHARD")) {
    if (!parse_shard(s, shard)) return fmt::format("RACELAB_SHARD is \"{}\", expected i/n with 1 <= i <= n", s);
    return "";
  }
  if (const char* id_text = env("SLURM_ARRAY_TASK_ID")) {
    const auto id = whole(id_text), min = whole(env("SLURM_ARRAY_TASK_MIN")),
               count = whole(env("SLURM_ARRAY_TASK_COUNT")), max = whole(env("SLURM_ARRAY_TASK_MAX"));
    if (!id || !min || !count)
      return fmt::format(
          "a Slurm array task needs SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT as whole "
          "numbers; found {}, {} and {}",
          id_text, env("SLURM_ARRAY_TASK_MIN") ? env("SLURM_ARRAY_TASK_MIN") : "(not set)",
          env("SLURM_ARRAY_TASK_COUNT") ? env("SLURM_ARRAY_TASK_COUNT") : "(not set)");
    if (max && *max - *min + 1 != *count)
      return fmt::format(
          "the Slurm array {}-{} has {} tasks: its indices have gaps (a step, or a list), which no shard i/n "
          "describes; submit --array={}-{} without a step",
          *min, *max, *count, *min, *min + *count - 1);
    if (*count < 1 || *id < *min || *id - *min >= *count)
      return fmt::format("SLURM_ARRAY_TASK_ID {} is outside the array {}..{}", *id, *min, *min + *count - 1);
    shard->index = static_cast<int>(*id - *min);
    shard->count = static_cast<int>(*count);
    return "";
  }
  if (const char* index_text = env("JOB_COMPLETION_INDEX")) {
    const auto index = whole(index_text), count = whole(env("RACELAB_SHARD_COUNT"));
    if (!count)
      return fmt::format(
          "a Kubernetes Indexed Job (JOB_COMPLETION_INDEX={}) also needs RACELAB_SHARD_COUNT, the Job's "
          "completions, in its environment",
          index_text);
    if (!index || *count < 1 || *index < 0 || *index >= *count)
      return fmt::format("JOB_COMPLETION_INDEX is \"{}\", expected 0 to {} (RACELAB_SHARD_COUNT={})", index_text,
                         *count - 1, *count);
    shard->index = static_cast<int>(*index);
    shard->count = static_cast<int>(*count);
    return "";
  }
  return "--shard auto found none of RACELAB_SHARD (i/n), SLURM_ARRAY_TASK_ID (with _MIN and _COUNT, in a Slurm "
         "job array) and JOB_COMPLETION_INDEX (with RACELAB_SHARD_COUNT, in a Kubernetes Indexed Job)";
}

}  // namespace racelab::campaign
