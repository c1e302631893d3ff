// docs/WALKTHROUGH.md runs as written: every ```console block's `$ ` command
// is executed in order, in one scratch directory (with ./scenarios pointing at
// the catalogue and the built racelab first on PATH), and the outcome classes
// each prints must be the ones the document shows. Timings, counts and
// schedule strings may differ; the classes may not.
//
// README.md and docs/USING.md run as written too: their ```console commands,
// from a scratch copy of the repository root's layout (scenarios/, tests/,
// examples/, python/ linked), each exiting 0 or 1 and printing at least the
// classes the document shows; their ```sh blocks (commands that need a torch
// root, a GPU, a LibTorch build or minutes) are checked to name a script that
// parses or a racelab command that exists. And the README stays a front door:
// at most 300 lines.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Command {
  std::string line;      // after "$ "
  std::string expected;  // the output the document shows
  int doc_line = 0;
};

// Every line inside the document's ```<fence> blocks, with its line number.
std::vector<std::pair<std::string, int>> fenced_lines(const std::string& path, const std::string& fence) {
  std::ifstream in(path);
  std::vector<std::pair<std::string, int>> out;
  bool in_block = false;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (!in_block)
      in_block = line == "```" + fence;
    else if (line.rfind("```", 0) == 0)
      in_block = false;
    else
      out.emplace_back(line, n);
  }
  return out;
}

// The ```console blocks: each "$ " line a command, the lines after it its output.
std::vector<Command> console_commands(const std::string& path) {
  std::vector<Command> out;
  for (const auto& [line, n] : fenced_lines(path, "console")) {
    if (line.rfind("$ ", 0) == 0)
      out.push_back({line.substr(2), "", n});
    else if (!out.empty())
      out.back().expected += line + "\n";
  }
  return out;
}

// The outcome classes a text names (harness/engine/outcome.h).
std::set<std::string> classes(const std::string& text) {
  static const std::regex re(
      R"(\b(holds|silent_fallback|error|wrong_result|stuck_state|data_race|divergence|hang|crash)\b)");
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) out.insert((*it)[1]);
  return out;
}

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return "{" + out + "}";
}

std::pair<int, std::string> run_in(const fs::path& dir, const std::string& command) {
  std::string quoted = "'";
  for (char c : command) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  const std::string bin = fs::path(RACELAB_EXE).parent_path().string();
  const std::string cmd = "cd '" + dir.string() + "' && PATH='" + bin + "':\"$PATH\" bash -c " + quoted + " 2>&1";
  std::string output;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), output};
}

TEST(Walkthrough, EveryCommandRunsAndPrintsTheDocumentedOutcomeClasses) {
  const std::string doc = std::string(RACELAB_SOURCE_DIR) + "/docs/WALKTHROUGH.md";
  const auto commands = console_commands(doc);
  ASSERT_GE(commands.size(), 8u) << doc << " has too few console commands";
  const fs::path dir = fs::temp_directory_path() / ("racelab-walkthrough-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::create_directory_symlink(std::string(RACELAB_SOURCE_DIR) + "/scenarios", dir / "scenarios");
  for (const auto& c : commands) {
    const auto [code, output] = run_in(dir, c.line);
    EXPECT_LT(code, 2) << "WALKTHROUGH.md:" << c.doc_line << ": $ " << c.line << "\nexit " << code << "\n" << output;
    EXPECT_EQ(join(classes(output)), join(classes(c.expected)))
        << "WALKTHROUGH.md:" << c.doc_line << ": $ " << c.line << "\n--- printed ---\n"
        << output << "--- documented ---\n"
        << c.expected;
  }
  fs::remove_all(dir);
}

// A scratch directory laid out as the repository root: the folders the
// documents name, linked read-only in spirit (the commands write only here).
fs::path scratch_root(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("racelab-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* sub : {"scenarios", "tests", "examples", "python", "docs"})
    fs::create_directory_symlink(std::string(RACELAB_SOURCE_DIR) + "/" + sub, dir / sub);
  return dir;
}

// Every ```console command of `doc` (relative to the source tree) runs, in
// order, in one scratch root: exit 0 or 1, and every class the document shows
// after it is among those it printed.
void runs_as_written(const std::string& doc, size_t at_least) {
  const auto commands = console_commands(std::string(RACELAB_SOURCE_DIR) + "/" + doc);
  ASSERT_GE(commands.size(), at_least) << doc << " has too few console commands";
  const fs::path dir = scratch_root(fs::path(doc).stem().string());
  for (const auto& c : commands) {
    const auto [code, output] = run_in(dir, c.line);
    EXPECT_LT(code, 2) << doc << ":" << c.doc_line << ": $ " << c.line << "\nexit " << code << "\n" << output;
    const auto printed = classes(output);
    for (const auto& shown : classes(c.expected))
      EXPECT_TRUE(printed.count(shown)) << doc << ":" << c.doc_line << ": $ " << c.line << "\nshows " << shown
                                        << ", which it did not print:\n"
                                        << output;
  }
  fs::remove_all(dir);
}

// The lines of every ```sh block: commands shown but not run here.
std::vector<Command> shown_commands(const std::string& path) {
  std::vector<Command> out;
  for (const auto& [line, n] : fenced_lines(path, "sh")) {
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '#') continue;
    const size_t comment = line.find('#');
    out.push_back({line.substr(first, comment == std::string::npos ? std::string::npos : comment - first), "", n});
  }
  return out;
}

// A shown command names what exists: `bash SCRIPT` a script that parses;
// `racelab SUB` a command whose --help exits 0. Setting a variable, CMake
// and a binary the command before it builds are taken as written.
void shown_commands_exist(const std::string& doc) {
  const auto shown = shown_commands(std::string(RACELAB_SOURCE_DIR) + "/" + doc);
  const fs::path dir = scratch_root(fs::path(doc).stem().string() + "-shown");
  int checked = 0;
  for (const auto& c : shown) {
    std::istringstream words(c.line);
    std::string first, second;
    words >> first >> second;
    std::string check;
    if (first == "bash") {
      EXPECT_TRUE(fs::exists(fs::path(RACELAB_SOURCE_DIR) / second)) << doc << ":" << c.doc_line << ": " << second;
      check = "bash -n '" + std::string(RACELAB_SOURCE_DIR) + "/" + second + "'";
    } else if (first == "racelab") {
      check = "racelab " + second + " --help >/dev/null";
    } else {
      continue;
    }
    ++checked;
    const auto [code, output] = run_in(dir, check);
    EXPECT_EQ(code, 0) << doc << ":" << c.doc_line << ": " << c.line << "\n" << check << ":\n" << output;
  }
  EXPECT_GT(checked, 0) << doc << ": no shown command checked";
  fs::remove_all(dir);
}

TEST(Readme, IsAFrontDoorOfAtMost300Lines) {
  std::ifstream in(std::string(RACELAB_SOURCE_DIR) + "/README.md");
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_GT(lines, 50u);
  EXPECT_LE(lines, 300u) << "measurements go to docs/RESULTS.md, the user guide to docs/USING.md";
}

TEST(Readme, EveryConsoleCommandRunsAsWritten) { runs_as_written("README.md", 10); }
TEST(Readme, EveryShownCommandNamesWhatExists) { shown_commands_exist("README.md"); }
TEST(Using, EveryConsoleCommandRunsAsWritten) { runs_as_written("docs/USING.md", 15); }
TEST(Using, EveryShownCommandNamesWhatExists) { shown_commands_exist("docs/USING.md"); }

}  // namespace
