// cli/known_messages.cpp -- see known_messages.h. The table below is the
// only place these messages are mapped to scenarios.
#include "cli/known_messages.h"

#include <cctype>

namespace racelab::cli {

const std::vector<KnownMessage>& known_messages() {
  static const std::vector<KnownMessage> table{
      {"fx_nested_trace",
       "RuntimeError: Detected that you are using FX to symbolically trace a dynamo-optimized function. This is "
       "not supported at the moment.",
       {{"Detected that you are using FX to symbolically trace a dynamo-optimized function"}},
       "The check at the entry of every torch.compile'd function saw the process-wide FX tracing flag set. Unless "
       "this thread really is tracing, another thread set it: a capture running right now (direct leak, user "
       "trace outside the lock, recompile after warm-up), or one whose restore was lost, so the flag stays set "
       "for the rest of the process (stuck true).",
       {"direct_leak", "stuck_true", "recompile_after_warmup", "user_trace_outside_lock", "module_patch",
        "trainer"},
       "docs/WALKTHROUGH.md"},
      {"new_patcher_assertion",
       "AssertionError (raised in torch.fx._symbolic_trace._new_patcher)",
       {{"_new_patcher"}},
       "The FX tracer patches Module.__call__ for the whole process and keeps the current patcher in one global. "
       "Two threads tracing at once save and restore each other's patcher: one finds a patcher it did not "
       "install, or the patch stays installed after both are done. Neither error_on_nested_fx_trace=False "
       "nor a patched check touches this.",
       {"module_patch"},
       "docs/WALKTHROUGH.md#4-try-the-three-fixes-people-try-first"},
      {"module_not_installed",
       "NameError: name '__...' is not defined (a global the FX patcher or dynamo installs into a module)",
       {{"NameError: name '__", "is not defined"}},
       "A name that the FX tracer's patcher or dynamo installs into a module's globals (the double-underscore "
       "names, e.g. __compiled_fn_N) was missing when the code ran: another thread's patcher reverted the "
       "globals it had saved before this thread installed its own, the process-wide module patch race. A "
       "NameError for an ordinary name is a plain bug, not this.",
       {"module_patch"},
       "docs/WALKTHROUGH.md#4-try-the-three-fixes-people-try-first"},
      {"cuda_capture_unsupported",
       "CUDA error: operation not permitted when stream is capturing (cudaErrorStreamCaptureUnsupported)",
       {{"operation not permitted when stream is capturing"}, {"cudaErrorStreamCaptureUnsupported"}},
       "While one thread captures a CUDA graph in the global capture mode (the default of torch.cuda.graph "
       "and mode=\"reduce-overhead\"), another thread made a call that is unsafe during capture (cudaMalloc, a "
       "legacy-stream copy, a synchronising call, a pinned host allocation). The call fails and invalidates "
       "the capture. The same shape as the FX flag: one process-wide mode read by every thread.",
       {"cuda_graph_capture"},
       "docs/WALKTHROUGH.md"},
      {"cuda_capture_invalidated",
       "CUDA error: operation failed due to a previous error during capture (cudaErrorStreamCaptureInvalidated)",
       {{"operation failed due to a previous error during capture"}, {"cudaErrorStreamCaptureInvalidated"}},
       "The capturing thread's side of the CUDA graph capture race: another thread's unsafe call during a "
       "global-mode capture invalidated this capture, and every later call in it fails with this.",
       {"cuda_graph_capture"},
       "docs/WALKTHROUGH.md"},
  };
  return table;
}

std::string normalise_message(const std::string& text) {
  std::string out;
  bool space = false;
  for (unsigned char c : text) {
    if (std::isspace(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

std::vector<const KnownMessage*> match_message(const std::string& text) {
  const std::string t = normalise_message(text);
  std::vector<const KnownMessage*> out;
  for (const auto& m : known_messages()) {
    for (const auto& alternative : m.fragments) {
      bool all = !alternative.empty();
      for (const auto& f : alternative) all = all && t.find(normalise_message(f)) != std::string::npos;
      if (all) {
        out.push_back(&m);
        break;
      }
    }
  }
  return out;
}

}  // namespace racelab::cli
