// compile/torch_compat.h -- the one place where LibTorch versions differ for racelab.
//
// racelab builds against Debian 12's LibTorch 1.13 and Debian 13's LibTorch 2.6 (and any
// later 2.x given with -DTorch_DIR). Code that needs something whose spelling or header
// moved between them includes this header instead of guessing:
//
//   * at::NoGradGuard: 1.13's <ATen/ATen.h> brought <ATen/core/grad_mode.h> in by
//     accident; 2.x's does not, so the guard is included here by name.
//   * The LibTorch version a binary was built against, for reports and for choosing a
//     scenario's expectations (they are keyed by "major.minor", see scenarios/README.md).
#ifndef RACELAB_COMPILE_TORCH_COMPAT_H_
#define RACELAB_COMPILE_TORCH_COMPAT_H_

#include <string>

#include <ATen/core/grad_mode.h>
#include <torch/csrc/api/include/torch/version.h>

namespace racelab::compile {

// "1.13", "2.6": the LibTorch this binary was compiled against. Expectations are keyed
// by it, since the races of process-global JIT state are a property of the version.
inline std::string libtorch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
}

// "1.13.1", "2.6.0": the full version, for reports.
inline std::string libtorch_full_version() { return TORCH_VERSION; }

}  // namespace racelab::compile

#endif  // RACELAB_COMPILE_TORCH_COMPAT_H_
