#include "cli/cell_parts.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "campaign/interrupt.h"
#include "cli/flags.h"
#include "engine/child_process.h"
#include "engine/outcome.h"
#include "engine/trial_plan.h"
#include "racelab/atomic_file.h"
#include "racelab/exit_code.h"

extern char** environ;  // the environment the parts inherit, less RACELAB_PART*

namespace racelab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kPartEnv = "RACELAB_PART";
constexpr const char* kPartDirEnv = "RACELAB_PART_DIR";
constexpr const char* kPartParentEnv = "RACELAB_PART_PARENT_PID";

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The complete lines of a part's records file from `*offset` on: a part may
// be writing its last one.
void read_new_records(const std::string& path, std::streamoff* offset, std::vector<TrialRecord>* out) {
  std::ifstream in(path);
  if (!in) return;
  in.seekg(*offset);
  std::string line;
  while (std::getline(in, line) && !in.eof()) {
    *offset = in.tellg();
    const json j = json::parse(line, nullptr, false);
    if (j.is_object()) out->push_back(TrialRecord::from_json(j));
  }
}

}  // namespace

bool part_from_environment(CellPart* part, std::string* dir) {
  const char* p = std::getenv(kPartEnv);
  const char* d = std::getenv(kPartDirEnv);
  if (p == nullptr || d == nullptr) return false;
  int k = 0, n = 0;
  if (std::sscanf(p, "%d/%d", &k, &n) != 2 || n < 1 || k < 1 || k > n) return false;
  // A part dies with its parent (a killed `racelab run -j N` leaves none running).
  if (!die_with_parent(kPartParentEnv, SIGTERM)) std::_Exit(kExitInterrupted);
  *part = CellPart{k - 1, n, 0};
  *dir = d;
  return true;
}

std::string part_results_path(const std::string& dir, int index) {
  return (fs::path(dir) / fmt::format("part-{}.jsonl", index + 1)).string();
}

std::string part_summary_path(const std::string& dir, int index) {
  return (fs::path(dir) / fmt::format("part-{}.summary.json", index + 1)).string();
}

void write_part_summary(const std::string& path, const CellSummary& s) {
  const json j = {{"trials", s.trials},
                  {"failures", s.failures},
                  {"by_outcome", s.by_outcome},
                  {"first_failure_trial", s.first_failure_trial},
                  {"first_failure_schedule", s.first_failure_schedule},
                  {"pct_floor", s.pct_floor},
                  {"pct_depth", s.pct_depth},
                  {"pct_k", s.pct_k},
                  {"pct_n", s.pct_n},
                  {"note", s.note}};
  write_file_atomically(path, j.dump() + "\n");
}

int run_in_parts(const std::vector<std::string>& argv, int jobs, const CellSpec& spec, bool progress,
                 PartsResult* out) {
  std::string tmpl = (fs::temp_directory_path() / "racelab-parts-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::fprintf(stderr, "racelab: -j: cannot make a folder for the parts under %s\n",
                 fs::temp_directory_path().c_str());
    return kExitBadInput;
  }
  const std::string dir = tmpl;
  struct Part {
    pid_t pid = -1;
    int status = 0;
    std::streamoff offset = 0;
  };
  std::vector<Part> parts(static_cast<size_t>(jobs));
  // The same command line: argv[0] is "racelab CMD", the binary runs CMD ARGS.
  std::vector<std::string> child_argv = {"/proc/self/exe", argv.front().substr(argv.front().rfind(' ') + 1)};
  child_argv.insert(child_argv.end(), argv.begin() + 1, argv.end());
  for (int k = 0; k < jobs; ++k) {
    ChildSpec c;
    c.argv = child_argv;
    c.shown_name = "racelab: part";
    c.parent_pid_env = kPartParentEnv;
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e)
      if (std::strncmp(*e, "RACELAB_PART", 12) != 0) env.emplace_back(*e);
    env.push_back(fmt::format("{}={}/{}", kPartEnv, k + 1, jobs));
    env.push_back(fmt::format("{}={}", kPartDirEnv, dir));
    c.env = env;
    const std::string log = (fs::path(dir) / fmt::format("part-{}.log", k + 1)).string();
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    c.dup2 = {{fd, 1}, {fd, 2}};
    c.stdin_dev_null = true;
    std::string error;
    parts[k].pid = spawn_child(c, &error);
    ::close(fd);
    if (parts[k].pid < 0) {
      std::fprintf(stderr, "racelab: -j: %s\n", error.c_str());
      for (const Part& p : parts)
        if (p.pid > 0) ::kill(p.pid, SIGTERM), wait_child(p.pid);
      fs::remove_all(dir);
      return kExitInternal;
    }
  }
  CellProgress line(progress, spec.max_trials);
  const double t0 = now_s();
  std::vector<TrialRecord> records;
  int64_t failures = 0;
  bool stopped_for_failure = false, forwarded = false;
  size_t running = parts.size();
  while (running > 0) {
    // A Ctrl-C at the terminal reaches the parts too; a `kill -INT` of this
    // process alone is passed on (as SIGTERM: see campaign/local_shards.cpp).
    if (campaign::interrupt_requested() && !forwarded) {
      for (const Part& p : parts)
        if (p.pid > 0) ::kill(p.pid, SIGTERM);
      forwarded = true;
    }
    for (size_t k = 0; k < parts.size(); ++k) {
      const size_t before = records.size();
      read_new_records(part_results_path(dir, static_cast<int>(k)), &parts[k].offset, &records);
      for (size_t i = before; i < records.size(); ++i) failures += is_failure(records[i].outcome) ? 1 : 0;
    }
    // --stop-at-first-failure: the first failure of any part stops them all.
    if (spec.stop_at_first_failure && failures > 0 && !stopped_for_failure) {
      for (const Part& p : parts)
        if (p.pid > 0) ::kill(p.pid, SIGTERM);
      stopped_for_failure = true;
    }
    line.update(static_cast<int64_t>(records.size()), failures);
    for (Part& p : parts) {
      if (p.pid <= 0) continue;
      int status = 0;
      if (::waitpid(p.pid, &status, WNOHANG) == p.pid) {
        p.status = status;
        p.pid = 0;
        --running;
      }
    }
    if (running > 0) ::usleep(100000);
  }
  line.done();
  // A part that refused its input (a bad flag, a program that cannot start)
  // refuses it for every part: its words, its exit code.
  for (size_t k = 0; k < parts.size(); ++k) {
    const int code = WIFEXITED(parts[k].status) ? WEXITSTATUS(parts[k].status) : 128 + WTERMSIG(parts[k].status);
    const bool expected = code == kExitOk || code == kExitExpectationFailed ||
                          (code == kExitInterrupted && (forwarded || stopped_for_failure));
    if (!expected) {
      std::fprintf(stderr, "%s", slurp((fs::path(dir) / fmt::format("part-{}.log", k + 1)).string()).c_str());
      fs::remove_all(dir);
      return code == kExitUsage || code == kExitBadInput ? code : kExitInternal;
    }
  }
  for (size_t k = 0; k < parts.size(); ++k)
    read_new_records(part_results_path(dir, static_cast<int>(k)), &parts[k].offset, &records);
  std::stable_sort(records.begin(), records.end(),
                   [](const TrialRecord& a, const TrialRecord& b) { return a.trial < b.trial; });
  CellSummary& s = out->summary;
  std::vector<std::string> notes;
  for (size_t k = 0; k < parts.size(); ++k) {
    const json j = json::parse(slurp(part_summary_path(dir, static_cast<int>(k))), nullptr, false);
    if (!j.is_object()) continue;  // stopped before its summary
    if (s.pct_depth == 0 && j.value("pct_depth", 0) > 0) {
      s.pct_floor = j.value("pct_floor", 0.0);
      s.pct_depth = j.value("pct_depth", 0);
      s.pct_k = j.value("pct_k", int64_t{0});
      s.pct_n = j.value("pct_n", 0);
    }
    notes.push_back(j.value("note", ""));
  }
  s.note = add_up_portfolio_notes(notes);
  if (s.note.empty() && !notes.empty()) s.note = notes.front();
  for (const TrialRecord& r : records) campaign::count_trial(r, &s);
  s.wall_s = now_s() - t0;
  out->records = std::move(records);
  out->interrupted = forwarded;
  fs::remove_all(dir);
  return kGoOn;
}

CellProgress::CellProgress(bool on, int64_t budget)
    : on_(on && ::isatty(2) == 1), budget_(budget), start_s_(now_s()) {}

void CellProgress::update(int64_t trials, int64_t failures) {
  if (!on_) return;
  const double t = now_s();
  if (last_s_ >= 0 && t - last_s_ < 0.2) return;
  last_s_ = t;
  const double elapsed = t - start_s_, rate = elapsed > 0 ? static_cast<double>(trials) / elapsed : 0;
  std::string left = "?";
  if (rate > 0 && budget_ > trials) left = fmt::format("{:.0f} s", static_cast<double>(budget_ - trials) / rate);
  std::fprintf(stderr, "\r\33[K[%lld/%lld trials] %lld failing | %.1f trials/s | %s left",
               static_cast<long long>(trials), static_cast<long long>(budget_), static_cast<long long>(failures), rate,
               left.c_str());
  std::fflush(stderr);
}

void CellProgress::done() {
  if (!on_ || last_s_ < 0) return;
  std::fprintf(stderr, "\r\33[K");
  std::fflush(stderr);
}

}  // namespace racelab::cli
