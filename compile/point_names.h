// compile/point_names.h -- every interleaving point of the system under
// test, in one place. The strings are stable: they appear in saved schedules,
// timelines and reports, so renaming one invalidates old schedule files.
//
// Convention: a point is placed immediately BEFORE the step it names, so "a
// thread paused at capture.restore_flag" means it has set the flag and traced,
// and has not yet restored it.
#ifndef RACELAB_COMPILE_POINT_NAMES_H_
#define RACELAB_COMPILE_POINT_NAMES_H_

namespace racelab::compile::points {

// A compiled call (CompiledFunction::operator()) and the mitigation around it.
inline constexpr const char* kCompiledEnter = "compiled.enter";      // before the mitigation
inline constexpr const char* kEntryCheck = "entry.check";            // before reading the capture flag
inline constexpr const char* kCacheLookup = "cache.lookup";          // before the guarded cache lookup
inline constexpr const char* kCacheInsert = "cache.insert";          // before publishing a compiled entry
inline constexpr const char* kCompileStart = "compile.start";        // lock held, before the capture scope
inline constexpr const char* kCompilePasses = "compile.passes";      // captured, before graph passes
inline constexpr const char* kCompiledRun = "compiled.run";          // before the graph executor runs
inline constexpr const char* kCompiledExit = "compiled.exit";        // after the call, mitigation released

// The capture scope (the FX tracer's save / set true / trace / restore).
inline constexpr const char* kCaptureSaveFlag = "capture.save_flag";
inline constexpr const char* kCaptureSetFlag = "capture.set_flag";
inline constexpr const char* kCaptureTrace = "capture.trace";
inline constexpr const char* kCaptureRestoreFlag = "capture.restore_flag";

// The eager path's compilation environment (save / set FALSE / lock / compile / restore).
inline constexpr const char* kEagerSaveFlag = "eager.save_flag";
inline constexpr const char* kEagerClearFlag = "eager.clear_flag";
inline constexpr const char* kEagerRestoreFlag = "eager.restore_flag";

// Lock acquisitions (racelab primitives make each acquisition a point).
inline constexpr const char* kCompileLock = "compile.lock";
inline constexpr const char* kCacheLock = "cache.lock";
inline constexpr const char* kMitigationLock = "mitigation.lock";
inline constexpr const char* kMitigationRwLock = "mitigation.rw_lock";

// The process-global module-call patch.
inline constexpr const char* kPatchInstall = "module_patch.install";
inline constexpr const char* kPatchRevert = "module_patch.revert";
inline constexpr const char* kModuleCall = "module.call";

// Real LibTorch settings flipped with save/restore around a compile.
inline constexpr const char* kJitSave = "jit_setting.save";
inline constexpr const char* kJitSet = "jit_setting.set";
inline constexpr const char* kJitCompile = "jit_setting.compile";
inline constexpr const char* kJitRestore = "jit_setting.restore";

// The shared TensorExpr-fused scripted function.
inline constexpr const char* kTeCall = "te_fuser.call";

// The CUDA runtime model (compile/cuda_capture.h). Each call's point names the
// runtime's capture table: begin/end capture and the potentially unsafe calls
// write it (a prohibited call invalidates a capture), stream work reads it.
inline constexpr const char* kCudaBeginCapture = "cuda.begin_capture";
inline constexpr const char* kCudaEndCapture = "cuda.end_capture";
inline constexpr const char* kCudaExchangeMode = "cuda.exchange_mode";
inline constexpr const char* kCudaMalloc = "cuda.malloc";
inline constexpr const char* kCudaHostAlloc = "cuda.host_alloc";
inline constexpr const char* kCudaMemcpy = "cuda.memcpy";
inline constexpr const char* kCudaSynchronize = "cuda.synchronize";
inline constexpr const char* kCudaLaunch = "cuda.launch";
inline constexpr const char* kCudaGraphInstantiate = "cuda.graph_instantiate";
inline constexpr const char* kCudaGraphLaunch = "cuda.graph_launch";
// The caching allocators' locks (compile/cuda_caching_allocator.h): taking one
// is the step before a pool lookup (a hit, or a miss that calls the runtime)
// or a free.
inline constexpr const char* kCudaCacheLock = "cuda_cache.lock";
inline constexpr const char* kCudaHostCacheLock = "cuda_host_cache.lock";

// Micro workload bodies.
inline constexpr const char* kWorkerIteration = "worker.iteration";

}  // namespace racelab::compile::points

#endif  // RACELAB_COMPILE_POINT_NAMES_H_
