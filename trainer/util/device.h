// trainer/util/device.h -- where the trainer's tensors live: `--device cpu|cuda[:N]`.
//
// The models are built on the CPU, where their seeded generators are, and then
// moved whole (Target::to, Drafter::to); every tensor the trainer makes after
// that (batches, masks, index tensors) is made on the device of the tensors it
// works with, so one decision at the start places a whole run. Checkpoints hold
// CPU tensors, so a run trained on a GPU resumes or evaluates on a CPU and back.
#ifndef TRAINER_UTIL_DEVICE_H_
#define TRAINER_UTIL_DEVICE_H_

#include <string>

#include <c10/core/Device.h>

namespace racelab::trainer {

// "" when `name` is a device this build can train on here; otherwise why not:
// not a device name, not cpu or cuda, a LibTorch built without CUDA, or no
// such GPU on this machine.
std::string check_compute_device(const std::string& name);

// The device `name` stands for; std::invalid_argument with check_compute_device's
// reason when it cannot be used.
c10::Device compute_device(const std::string& name);

}  // namespace racelab::trainer

#endif  // TRAINER_UTIL_DEVICE_H_
