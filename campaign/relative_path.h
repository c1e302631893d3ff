// campaign/relative_path.h -- paths that a file written by racelab names
// (a results file's schedules, a report's scenario files and schedules),
// written relative to that file's own folder, so that the folder can be
// moved or copied whole (a CI job's artifact, merged on another machine)
// and still find what it names.
//
//   rel = relative_to("/ci/work/out/schedules/a.json", "/ci/work/out");  // "schedules/a.json"
//   abs = resolve_from(rel, "/downloads/out");  // "/downloads/out/schedules/a.json"
//
// Both are purely lexical: nothing need exist.
#ifndef RACELAB_CAMPAIGN_RELATIVE_PATH_H_
#define RACELAB_CAMPAIGN_RELATIVE_PATH_H_

#include <filesystem>
#include <string>

namespace racelab::campaign {

// `path` (absolute, or relative to the working directory) as seen from
// `dir`. Kept as is when empty or when no relative path exists.
std::string relative_to(const std::string& path, const std::filesystem::path& dir);

// As relative_to, for a path inside `dir`; any other (a schedule folder the
// user put elsewhere) absolute, so that it is still found from a file that
// moved without it.
std::string relative_if_inside(const std::string& path, const std::filesystem::path& dir);

// A path read from a file in `dir`: a relative one is taken from `dir` (and
// made absolute); an absolute one (a file an older racelab wrote) or an empty
// one is kept as is.
std::string resolve_from(const std::string& path, const std::filesystem::path& dir);

}  // namespace racelab::campaign

#endif  // RACELAB_CAMPAIGN_RELATIVE_PATH_H_
