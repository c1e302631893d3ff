// The workload t_tensor_lost_update: threads increment a shared tensor through
// two ops, a read (item) and a write (fill_), with no racelab point between
// them in the source: only op points can put another thread there.
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/ops/zeros.h>

#include "racelab/sync.h"
#include "racelab/workload.h"

namespace {

racelab::Observation tensor_lost_update(const racelab::TrialInput& in) {
  at::Tensor counter = at::zeros({1}, at::kLong);
  std::vector<racelab::Thread> threads;
  for (int i = 0; i < in.threads; ++i)
    threads.emplace_back([&counter] {
      const int64_t seen = counter.item<int64_t>();
      counter.fill_(seen + 1);
    });
  for (auto& t : threads) t.join();
  racelab::Observation obs;
  if (counter.item<int64_t>() != in.threads)
    obs.wrong_result = "counter " + std::to_string(counter.item<int64_t>()) + " after " +
                       std::to_string(in.threads) + " increments";
  return obs;
}

racelab::WorkloadRegistrar registrar{racelab::Workload{
    "t_tensor_lost_update", "Threads increment a shared tensor with item() then fill_()", nlohmann::json::object(),
    {"none"}, false, [] {}, &tensor_lost_update}};

}  // namespace
