#include "campaign/results_log.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "campaign/relative_path.h"
#include "engine/trial_plan.h"

namespace racelab::campaign {

using nlohmann::json;

namespace {

// The folder of the results file at `path`: what the files it names are
// relative to (campaign/relative_path.h).
std::filesystem::path folder_of(const std::string& path) {
  return std::filesystem::absolute(path).parent_path();
}

}  // namespace

ResultsWriter::ResultsWriter(const std::string& path, const json& header)
    : out_(path, JsonlWriter::Mode::kTruncate), folder_(folder_of(path)) {
  out_.write({{"campaign", header}});
}

void ResultsWriter::trial(const TrialRecord& record, uint64_t cell_seed) {
  json t = record.to_json();
  if (t.contains("schedule_file")) t["schedule_file"] = relative_if_inside(record.schedule_file, folder_);
  out_.write({{"trial", t}, {"cell_seed", cell_seed}});
}

json ResultsWriter::cell(const CellSpec& spec, const CellSummary& summary, bool interrupted) {
  json c = {{"scenario", spec.scenario},
          {"workload", spec.workload},
          {"mitigation", spec.mitigation},
          {"strategy", spec.strategy},
          {"threads", spec.threads},
          {"seed", spec.seed},
          {"max_trials", spec.max_trials},
          {"max_seconds", spec.max_seconds},
          {"stop_at_first_failure", spec.stop_at_first_failure},
          {"trials", summary.trials},
          {"failures", summary.failures},
          {"by_outcome", summary.by_outcome},
          {"first_failure_trial", summary.first_failure_trial},
          {"first_failure_schedule", relative_if_inside(summary.first_failure_schedule, folder_)},
          {"exhausted", summary.exhausted},
          {"pct_floor", summary.pct_floor},
          {"wall_s", summary.wall_s},
          {"interrupted", interrupted}};
  if (spec.rate_trials > 0) c["rate_trials"] = spec.rate_trials;
  // One part of a cell dealt over shards: a merge judges the cell once it
  // has every part that has trials (engine/trial_plan.h).
  if (spec.part.count > 1)
    c["part"] = {{"index", spec.part.index + 1},
                 {"of", spec.part.count},
                 {"parts", parts_with_trials(spec.part, spec.max_trials, trial_block(spec.strategy))}};
  // A cell its expectation decided before its budget ran out (matrix.h, kRateTrials).
  if (spec.stop_at_first_failure && summary.failures > 0 && summary.trials < spec.max_trials && !interrupted)
    c["stopped"] = "decided";
  if (summary.pct_depth > 0) c["pct"] = {{"d", summary.pct_depth}, {"k", summary.pct_k}, {"n", summary.pct_n}};
  if (!summary.note.empty()) c["note"] = summary.note;
  if (summary.classes >= 0) c["classes"] = summary.classes;
  out_.write({{"cell", c}});
  // As read_results() gives it back: the schedule's path from here, not from the file.
  c["first_failure_schedule"] = resolve_from(c["first_failure_schedule"].get<std::string>(), folder_);
  return c;
}

void ResultsWriter::end(bool interrupted, double wall_s) {
  out_.write({{"end", {{"interrupted", interrupted}, {"wall_s", wall_s}}}});
  out_.sync();
}

void read_results(const std::string& path, ResultsData* data) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::runtime_error(fmt::format("{}: is a directory, expected a results file (e.g. {}/results.jsonl)",
                                         path, path));
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read results file " + path);
  const std::filesystem::path folder = folder_of(path);  // what the schedules it names are relative to
  bool saw_end = false;
  std::string text;
  size_t lineno = 0;
  bool saw_header = false;
  size_t header_line = 0;
  while (std::getline(in, text)) {
    ++lineno;
    if (text.empty()) continue;
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    const bool trial_line = j.is_object() && j.contains("trial") && j.size() == 2 && j.contains("cell_seed");
    if (j.is_discarded() || !j.is_object() || (j.size() != 1 && !trial_line)) {
      // Only the last line can be torn by a kill (it has no newline: getline
      // hit the end of the file); anything else is corruption, but a report of
      // the rest is still more useful than none.
      data->warnings.push_back(
          in.eof() ? fmt::format("{}:{}: skipped a torn last line (its writer was killed mid-line)", path, lineno)
                   : fmt::format("{}:{}: skipped a line that is not a results record", path, lineno));
      continue;
    }
    if (saw_header && j.contains("campaign")) {
      // Two shards written one after the other into one file: the second
      // header would be skipped and its trials kept, past merge's check that
      // each shard comes once. One results file holds one shard.
      throw std::runtime_error(fmt::format("{}:{}: a second campaign header (the first is on line {}); a results "
                                           "file holds one shard's results: give each shard's file on its own",
                                           path, lineno, header_line));
    }
    if (!saw_header) {
      // Types are checked before reading: json::value() throws a type_error on a
      // field of another type, and a bad file must be refused by name, not abort.
      const bool format_ok = j.contains("campaign") && j["campaign"].is_object() &&
                             j["campaign"].contains("format") && j["campaign"]["format"].is_string() &&
                             j["campaign"]["format"].get<std::string>() == kResultsFormat;
      if (!format_ok)
        throw std::runtime_error(fmt::format("{}:{}: not a racelab results file (expected a first line "
                                             "{{\"campaign\": {{\"format\": \"{}\", ...}}}})",
                                             path, lineno, kResultsFormat));
      const json version = j["campaign"].contains("version") ? j["campaign"]["version"] : json();
      if (!version.is_number_integer() || version.get<int64_t>() != kResultsVersion)
        throw std::runtime_error(fmt::format("{}:{}: results version {} (this racelab reads version {})", path,
                                             lineno, version.dump(), kResultsVersion));
      saw_header = true;
      header_line = lineno;
      data->headers.push_back(j["campaign"]);
      continue;
    }
    try {
      if (j.contains("trial")) {
        TrialRecord r = TrialRecord::from_json(j["trial"]);
        r.schedule_file = resolve_from(r.schedule_file, folder);
        data->cell_seeds.push_back(j.value("cell_seed", r.seed));
        data->trials.push_back(std::move(r));
      }
      else if (j.contains("cell")) {
        json& c = j["cell"];
        if (c.is_object() && c.contains("first_failure_schedule") && c["first_failure_schedule"].is_string())
          c["first_failure_schedule"] = resolve_from(c["first_failure_schedule"].get<std::string>(), folder);
        data->cells.push_back(c);
      }
      else if (j.contains("end")) {
        data->ends.push_back(j["end"]);
        saw_end = true;
      }
      else
        data->warnings.push_back(fmt::format("{}:{}: skipped an unknown record", path, lineno));
    } catch (const std::exception& e) {
      data->warnings.push_back(fmt::format("{}:{}: skipped a malformed record ({})", path, lineno, e.what()));
    }
  }
  if (!saw_header) throw std::runtime_error(path + ": empty results file (no campaign header line)");
  if (!saw_end) {
    // Its writer never finished: the trials above are whole, the campaign is not.
    data->warnings.push_back(fmt::format(
        "{}:{}: no end record (its campaign was interrupted or killed, or is still running): counted as interrupted",
        path, lineno + 1));
    data->unfinished.push_back(path);
  }
}

}  // namespace racelab::campaign
