// The CUDA graph-capture model (compile/cuda_graph_workload.h) as the
// racelab::Workload cuda_graph_capture. LibTorch-free; runs on every machine.
//
// Knobs (every one listed in default_knobs): iterations (batches in flight in
// the loader, blocks held by each worker), kernels (in the captured region),
// words (per block), capture_pins (the capturer stages its input through a
// pinned block inside the capture: compile/cuda_graph_workload.h). The engine's TrialInput.threads is the number of threads:
// the capturer, the loader, then workers.
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "racelab/workload.h"
#include "compile/cuda_graph_workload.h"
#include "micro_observation.h"

namespace {

using nlohmann::json;
namespace cuda = racelab::compile::cuda;

json default_knobs() {
  const cuda::CudaGraphConfig c;
  return json{{"iterations", c.iterations}, {"kernels", c.kernels}, {"words", c.words}, {"capture_pins", c.capture_pins}};
}

void check_knobs(const json& k) {
  racelab::int_knob(k, "iterations", 1, 1000);
  racelab::int_knob(k, "kernels", 1, 1000);
  racelab::int_knob(k, "words", 1, 4096);
}

racelab::Observation run(const racelab::TrialInput& in) {
  cuda::CudaGraphConfig c;
  c.mitigation = in.mitigation.empty() ? "none" : in.mitigation;
  c.threads = in.threads;
  c.iterations = static_cast<int>(racelab::int_knob(in.knobs, "iterations", 1, 1000));
  c.kernels = static_cast<int>(racelab::int_knob(in.knobs, "kernels", 1, 1000));
  c.words = racelab::int_knob(in.knobs, "words", 1, 4096);
  c.capture_pins = in.knobs.value("capture_pins", c.capture_pins);  // its type was checked against default_knobs
  return racelab::scenarios::observe_micro(cuda::run_cuda_graph_capture(c));
}

racelab::WorkloadRegistrar registrar{racelab::Workload{cuda::kCudaGraphWorkload, cuda::cuda_graph_description(),
                                                       default_knobs(), cuda::cuda_graph_mitigations(), false,
                                                       [] { cuda::reset_cuda_for_trial(); }, &run, &check_knobs}};

}  // namespace
