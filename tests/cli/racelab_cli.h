// tests/cli/racelab_cli.h -- runs the racelab binary as a user would and
// captures its exit code and output; a scratch folder for the files a test
// hands it. Shared by the command-line suites of tests/cli/.
#ifndef RACELAB_TESTS_CLI_RACELAB_CLI_H_
#define RACELAB_TESTS_CLI_RACELAB_CLI_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace racelab::testing {

struct CliResult {
  int code = -1;
  std::string output;  // stdout + stderr
};

// A shell command line, run through popen with its stderr joined to its
// stdout; a death by signal S reads as 128 + S, as a shell reports it.
inline CliResult run_shell(const std::string& command) {
  CliResult r;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// `racelab ARGS` through the shell (ARGS is shell text).
inline CliResult racelab(const std::string& args) { return run_shell(std::string(RACELAB_EXE) + " " + args); }

// `racelab ARGS` under `env ENV` (shell text: "-u B A=1" unsets B, sets A),
// as a job scheduler or a CI runner starts it.
inline CliResult racelab_with_env(const std::string& env, const std::string& args) {
  return run_shell("env " + env + " " + std::string(RACELAB_EXE) + " " + args);
}

// `racelab ARGS` with each argument passed as one shell word, whatever it
// holds (quotes, newlines, spaces).
inline CliResult racelab_args(const std::vector<std::string>& args) {
  std::string words;
  for (const auto& a : args) {
    words += " '";
    for (char c : a) words += c == '\'' ? std::string("'\\''") : std::string(1, c);
    words += "'";
  }
  return racelab(words);
}

// A fresh folder under the system's temporary directory, removed at the end.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "racelab-cli-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data()) ? tmpl : std::string();
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Writes `text` to NAME in the folder; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name)) << text;
    return file(name);
  }

 private:
  std::string path_;
};

}  // namespace racelab::testing

#endif  // RACELAB_TESTS_CLI_RACELAB_CLI_H_
