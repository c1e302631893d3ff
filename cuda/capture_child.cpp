// cuda/capture_child.cpp -- the isolate_process child and its protocol (capture_child.h).
#include "cuda/capture_child.h"

#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "cuda/caching_pool.h"
#include "engine/child_process.h"

namespace racelab::cuda {

std::string capture_child_path() {
  if (const char* env = std::getenv("RACELAB_CUDA_CAPTURE"); env != nullptr && *env != '\0') return env;
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    dir = dir.substr(0, dir.rfind('/') + 1);
    const std::string next = dir + kCaptureChildName;
    if (::access(next.c_str(), X_OK) == 0) return next;
  }
  return RACELAB_CUDA_CAPTURE_BUILT;  // the build's own (a test binary lives elsewhere)
}

std::vector<std::string> capture_child_args(const std::string& exe, const CaptureSpec& spec) {
  return {exe, "--kernels", std::to_string(spec.kernels), "--bytes", std::to_string(spec.bytes)};
}

bool parse_capture_child_output(const std::string& out, LogSink& sink, std::string* problem) {
  std::istringstream lines(out);
  std::string line;
  bool done = false;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "call") {
      std::string api;
      long code = 0;
      if (!(words >> api >> code)) {
        *problem = "child output: cannot read '" + line + "' (expected: call API CODE)";
        return false;
      }
      sink.call(Role::kCapture, 0, "child " + api, static_cast<cudaError_t>(code));
    } else if (kind == "replayed") {
      sink.replayed();
    } else if (kind == "mismatch") {
      std::string rest;
      std::getline(words, rest);
      sink.mismatch("child:" + rest);
    } else if (kind == "done") {
      done = true;
    } else if (!kind.empty()) {
      *problem = "child output: unknown line '" + line + "'";
      return false;
    }
  }
  if (!done) *problem = "child output: no 'done' line (it stopped early)";
  return done;
}

int capture_child_main(int argc, char** argv) {
  // No orphan holding a device context: a killed trial process takes it along.
  if (!racelab::die_with_parent(kCaptureParentPidEnv)) return 1;
  CaptureSpec spec;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--kernels") == 0) spec.kernels = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--bytes") == 0) spec.bytes = static_cast<size_t>(std::atol(argv[i + 1]));
    else {
      std::fprintf(stderr, "%s: unknown flag %s (expected --kernels N --bytes B)\n", kCaptureChildName, argv[i]);
      return 2;
    }
  }
  if (spec.kernels < 1 || spec.bytes < sizeof(float)) {
    std::fprintf(stderr, "%s: expected --kernels >= 1 and --bytes >= 4\n", kCaptureChildName);
    return 2;
  }
  TrialLog log;
  LogSink sink(&log);
  CachingPool pool;
  std::atomic<int> open{0};
  capture_loop(spec, pool, nullptr, &open, sink);
  pool.release();
  for (const Call& c : log.calls) std::printf("call %s %d\n", c.api.c_str(), static_cast<int>(c.code));
  for (int i = 0; i < log.captures_replayed; ++i) std::printf("replayed\n");
  for (const std::string& m : log.replay_mismatches) std::printf("mismatch %s\n", m.c_str());
  std::printf("done\n");
  return 0;
}

}  // namespace racelab::cuda
