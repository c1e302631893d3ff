// campaign/results_log.h -- the campaign's raw results, one JSON object per line.
//
// A results file (results.jsonl, documented in reports/REPORT_FORMAT.md) holds:
//   {"campaign": {...}}   header: format, version, mode, budget scale, shard and the
//                         scenario documents, so a report needs no other input;
//   {"trial": {...}, "cell_seed": S}
//                         one TrialRecord (the engine's to_json), appended and
//                         flushed as soon as the trial ends; cell_seed is the
//                         cell's seed (the record's own seed is the trial's);
//   {"cell": {...}}       a finished cell: its spec and the engine's CellSummary;
//   {"end": {...}}        the campaign ended (interrupted or not) and its wall time.
// A killed campaign leaves a prefix of this: every finished trial survives, a
// torn last line is skipped on reading (with a warning naming its file and
// line), and a file with no "end" record counts as interrupted.
#ifndef RACELAB_CAMPAIGN_RESULTS_LOG_H_
#define RACELAB_CAMPAIGN_RESULTS_LOG_H_

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "racelab/jsonl.h"
#include "engine/cell.h"

namespace racelab::campaign {

inline constexpr const char* kResultsFormat = "racelab-results";
inline constexpr int kResultsVersion = 1;

class ResultsWriter {
 public:
  // Truncates `path` and writes the header line. Throws std::runtime_error
  // naming the file when it cannot be written.
  ResultsWriter(const std::string& path, const nlohmann::json& header);

  void trial(const TrialRecord& record, uint64_t cell_seed);
  // Returns the object it wrote (what read_results() would give back).
  nlohmann::json cell(const CellSpec& spec, const CellSummary& summary, bool interrupted);
  // The last line; the file is fsynced after it.
  void end(bool interrupted, double wall_s);
  const std::string& path() const { return out_.path(); }

 private:
  JsonlWriter out_;
  std::filesystem::path folder_;  // the schedules it names are relative to it
};

// Everything one or more results files say, in file order.
struct ResultsData {
  std::vector<nlohmann::json> headers;  // the "campaign" objects
  std::vector<TrialRecord> trials;
  std::vector<uint64_t> cell_seeds;     // parallel to trials: the seed of the trial's cell
  std::vector<nlohmann::json> cells;    // the "cell" objects
  std::vector<nlohmann::json> ends;
  std::vector<std::string> warnings;    // torn, unknown or missing records, each "FILE:LINE: what"
  std::vector<std::string> unfinished;  // files with no "end" record: interrupted or killed
};

// Appends `path`'s contents to `data`. Throws std::runtime_error naming the
// file (and line) for a file that is not a racelab results file: a directory,
// an unreadable or empty file, a first line that is not the header.
void read_results(const std::string& path, ResultsData* data);

}  // namespace racelab::campaign

#endif  // RACELAB_CAMPAIGN_RESULTS_LOG_H_
