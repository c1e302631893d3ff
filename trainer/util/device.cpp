#include "trainer/util/device.h"

#include <stdexcept>

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <fmt/format.h>

#include "compile/torch_compat.h"

namespace racelab::trainer {

std::string check_compute_device(const std::string& name) {
  c10::optional<c10::Device> parsed;
  try {
    parsed = c10::Device(name);
  } catch (const std::exception&) {
    return fmt::format("'{}' is not a device (expected cpu, cuda or cuda:N)", name);
  }
  if (parsed->is_cpu()) return "";
  if (!parsed->is_cuda()) return fmt::format("'{}': the trainer runs on cpu or cuda only", name);
  if (!at::hasCUDA())
    return fmt::format("'{}': this racelab is built against LibTorch {} without CUDA (build it against a CUDA "
                       "LibTorch 2.x, as ci/gpu-check does), or no GPU is visible",
                       name, compile::libtorch_full_version());
  const int gpus = at::detail::getCUDAHooks().getNumGPUs();
  if (parsed->has_index() && parsed->index() >= gpus)
    return fmt::format("'{}': this machine has {} GPU(s)", name, gpus);
  return "";
}

c10::Device compute_device(const std::string& name) {
  if (auto why = check_compute_device(name); !why.empty()) throw std::invalid_argument("--device " + why);
  return c10::Device(name);
}

}  // namespace racelab::trainer
