#include "cli/flags.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "racelab/exit_code.h"

namespace racelab::cli {

int parse_flags(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints --help to stdout and errors to stderr; its codes are its own.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  return kGoOn;
}

int usage_error(const CLI::App& app, const CLI::Error& error) {
  app.exit(error);
  return kExitUsage;
}

namespace {

// s as a whole number (nothing after it), or false.
bool parse_number(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && errno == 0 && std::isfinite(*out);
}

}  // namespace

CLI::Validator positive_integer() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        if (!parse_number(s, &v) || v < 1 || v != std::floor(v) || v > 9.0e15)
          return "expected an integer >= 1, got '" + s + "'";
        return {};
      },
      "INT>=1");
}

CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        if (!parse_number(s, &v) || v <= 0) return "expected a number of seconds > 0, got '" + s + "'";
        return {};
      },
      "SECONDS>0");
}

CLI::Validator non_negative_seconds() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        if (!parse_number(s, &v) || v < 0) return "expected a number of seconds >= 0, got '" + s + "'";
        return {};
      },
      "SECONDS>=0");
}

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        if (!parse_number(s, &v) || v <= 0) return "expected a finite number > 0, got '" + s + "'";
        return {};
      },
      "NUMBER>0");
}

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        // Digits only: strtoull would take "-1" as 2^64-1 and saturate a longer number to it.
        const bool digits = !s.empty() && s.size() <= 20 && s.find_first_not_of("0123456789") == std::string::npos;
        errno = 0;
        if (!digits || (std::strtoull(s.c_str(), nullptr, 10), errno == ERANGE))
          return "expected an integer from 0 to 18446744073709551615, got '" + s + "'";
        return {};
      },
      "SEED");
}

CLI::Validator non_empty(const std::string& what) {
  return CLI::Validator(
      [what](std::string& s) -> std::string { return s.empty() ? "expected " + what + ", got nothing" : ""; },
      "TEXT");
}

int require_input_file(const CLI::App& app, const std::string& path) {
  struct stat st;
  const char* why = nullptr;
  if (::stat(path.c_str(), &st) != 0) why = std::strerror(errno);
  else if (S_ISDIR(st.st_mode)) why = "a directory, expected a file";
  else if (!std::ifstream(path)) why = "not readable";
  if (why == nullptr) return kGoOn;
  std::fprintf(stderr, "%s: %s: %s\n", app.get_name().c_str(), path.c_str(), why);
  return kExitBadInput;
}

namespace {

// Why `path` cannot be written as `kind`, or "" when it can.
std::string output_problem(const std::string& path, Output kind) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (kind == Output::kFolder && !S_ISDIR(st.st_mode)) return "not a directory (a folder is expected here)";
    if (kind != Output::kFolder && S_ISDIR(st.st_mode)) return "is a directory, expected a file";
    if (::access(path.c_str(), kind == Output::kFolder ? W_OK | X_OK : W_OK) != 0)
      return std::string("not writable (") + std::strerror(errno) + ")";
    return "";
  }
  if (errno != ENOENT && errno != ENOTDIR) return std::strerror(errno);
  // Not there: the nearest folder above it that exists must take new entries.
  namespace fs = std::filesystem;
  fs::path above = fs::path(path).parent_path();
  if (kind == Output::kFile) {
    const std::string dir = above.empty() ? "." : above.string();
    if (::stat(dir.c_str(), &st) != 0) return "its folder " + dir + " does not exist";
  }
  while (!above.empty() && ::stat(above.c_str(), &st) != 0) above = above.parent_path();
  const std::string dir = above.empty() ? "." : above.string();
  if (above.empty() && ::stat(".", &st) != 0) return std::string("the current folder: ") + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return dir + " is a file, not a folder: nothing can be made below it";
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return "cannot make anything in " + dir + " (" + std::strerror(errno) + ")";
  // access() says yes to root in /proc, where nothing can be made: make something, and remove it.
  std::string probe = (fs::path(dir) / ".racelab-probe-XXXXXX").string();
  if (::mkdtemp(probe.data()) == nullptr) return "cannot make anything in " + dir + " (" + std::strerror(errno) + ")";
  ::rmdir(probe.c_str());
  return "";
}

}  // namespace

int require_output(const std::string& who, const std::string& flag, const std::string& path, Output kind) {
  if (path.empty()) return kGoOn;
  const std::string why = output_problem(path, kind);
  if (why.empty()) return kGoOn;
  std::fprintf(stderr, "%s: %s %s: %s (checked before any work, so none is lost)\n", who.c_str(),
               flag.c_str(), path.c_str(), why.c_str());
  return kExitBadInput;
}

}  // namespace racelab::cli
