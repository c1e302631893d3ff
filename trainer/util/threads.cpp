#include "trainer/util/threads.h"

#include <dlfcn.h>

#include <ATen/Parallel.h>

namespace racelab::trainer {

void use_single_intra_op_thread() {
  at::set_num_threads(1);
  using SetThreads = void (*)(int);
  for (const char* name : {"openblas_set_num_threads", "goto_set_num_threads"})
    if (auto fn = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, name))) {
      fn(1);
      break;
    }
}

}  // namespace racelab::trainer
