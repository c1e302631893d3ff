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
      {"config_patch_prior",
       "AssertionError: assert not prior (torch.utils._config_module, ConfigPatch.__enter__)",
       {{"assert not prior"}, {"prior should not be empty when exiting ConfigPatch"}},
       "A torch._dynamo.config.patch(...) object -- a decorator, or one made once and entered from several "
       "places -- was entered by a thread while another thread was inside it. On torch 2.6 the object keeps "
       "the values it replaced in one dict, `prior`, and the config is one process-wide value: besides this "
       "assertion, a thread can save another's patched value and restore it last (the config stays patched), "
       "or run its body after another's exit restored the default. torch.compile(dynamic=False) and other "
       "per-call options wrap every call in such a patch. torch 2.14 keeps both in ContextVars, one per thread.",
       {"config_patch"},
       "scenarios/config_patch.json"},
      {"recompile_limit",
       "torch._dynamo hit config.recompile_limit (8) (torch 2.6: config.cache_size_limit)",
       {{"torch._dynamo hit config.recompile_limit"}, {"torch._dynamo hit config.cache_size_limit"},
        {"hit config.", "function:", "last reason:"}},
       "Dynamo compiled one frame as many times as its limit allows and runs it eagerly from now on. Besides "
       "a function called with ever new shapes or guards, threads can cause it: dynamo looks its code cache up "
       "before it takes the compile lock and not again under it, so N threads that meet one new input at once "
       "compile the frame N times, each compile counted against the limit (the compile stampede).",
       {"compile_stampede"},
       "scenarios/compile_stampede.json"},
      {"compiler_stance",
       "torch.compiler.set_stance(...) in one thread, compiled calls of another running eagerly (or: Detected "
       "recompile when torch.compile stance is 'fail_on_recompile')",
       {{"torch.compile stance is"}, {"set_stance"}},
       "The compiler stance is one process-wide value: set_stance(\"force_eager\") (or fail_on_recompile, "
       "eager_on_recompile) in one thread applies to every thread's compiled calls while it is set, and two "
       "threads whose set_stance blocks overlap restore each other's saved stance, which can leave it set for "
       "good.",
       {"compiler_stance"},
       "scenarios/compiler_stance.json"},
      {"current_patcher",
       "AssertionError: CURRENT_PATCHER was changed during a revert_all_patches (torch 2.14: CURRENT_PATCHER is "
       "None in finally block)",
       {{"CURRENT_PATCHER"}},
       "torch.fx._symbolic_trace.CURRENT_PATCHER is one process-wide slot for the patcher of the FX trace "
       "running. Two threads tracing at once (a user's symbolic_trace, a compile's make_fx) install and revert "
       "their patchers over each other's: one finds a patcher it did not install, or reverts another thread's "
       "patches so that thread's graph silently changes, or the patch stays installed after both are done.",
       {"module_patch", "module_patch_trace_and_eager"},
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
