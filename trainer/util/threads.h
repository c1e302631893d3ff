// trainer/util/threads.h -- one intra-op thread per worker.
//
// The trainer's parallelism is its worker threads. LibTorch's intra-op pool and
// OpenBLAS's own thread pool would otherwise oversubscribe the cores: measured on
// 2 cores, OpenBLAS's pool alone made drafter steps 3x slower (2.5 vs 7.3
// steps/s) and spent most of it in the kernel. at::set_num_threads() does not
// reach OpenBLAS here, so its setter is looked up at run time (absent with the
// reference BLAS, in which case there is no pool to limit). It also makes runs
// deterministic: one thread means one summation order.
#ifndef TRAINER_UTIL_THREADS_H_
#define TRAINER_UTIL_THREADS_H_

namespace racelab::trainer {

void use_single_intra_op_thread();

}  // namespace racelab::trainer

#endif  // TRAINER_UTIL_THREADS_H_
