// docs/WALKTHROUGH.md runs as written: every ```console block's `$ ` command
// is executed in order, in one scratch directory (with ./scenarios pointing at
// the catalogue and the built racelab first on PATH), and the outcome classes
// each prints must be the ones the document shows. Timings, counts and
// schedule strings may differ; the classes may not.
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

std::vector<Command> console_commands(const std::string& path) {
  std::ifstream in(path);
  std::vector<Command> out;
  bool in_block = false;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (!in_block) {
      in_block = line == "```console";
      continue;
    }
    if (line.rfind("```", 0) == 0) {
      in_block = false;
    } else if (line.rfind("$ ", 0) == 0) {
      out.push_back({line.substr(2), "", n});
    } else if (!out.empty()) {
      out.back().expected += line + "\n";
    }
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

}  // namespace
