"""The process-wide torch state a trial must leave as it found it, and its oracles.

- torch.fx._symbolic_trace._is_fx_tracing_flag: the FX tracing flag, one per
  process in torch 2.4 to 2.x (thread-local in later versions);
- torch.nn.Module's __call__ and __getattr__, which an FX trace patches for the
  whole process while it runs;
- torch.fx._symbolic_trace.CURRENT_PATCHER, the patcher of the trace running;
- torch._dynamo.config.verbose, the key the config-patch workload patches
  (python/racelab/dynamo_state.py), and the compiler stance
  (torch.compiler.set_stance), both process-wide in torch 2.6;
- (traceback_problems(), for torch_traceback_meta only) torch.fx.traceback's
  should_preserve_node_meta and current_meta, module globals.

The worker checks the state before every trial as well as after it: a process
whose state is not fresh is replaced, never trusted.
"""
import torch
import torch.fx._symbolic_trace as _st

_MODULE_ATTRS = ("__call__", "__getattr__", "_call_impl")
_original = {a: torch.nn.Module.__dict__.get(a) for a in _MODULE_ATTRS}
_CONFIG_KEY = "verbose"  # dynamo_state.CONFIG_KEY
_config_default = getattr(torch._dynamo.config, _CONFIG_KEY)


def _stance():
    from torch._dynamo import eval_frame
    return getattr(getattr(eval_frame, "_stance", None), "stance", "default")


def problems():
    """What is not as a fresh process has it; empty when all is fresh."""
    out = []
    if getattr(_st, "_is_fx_tracing_flag", False):
        out.append("the FX tracing flag (torch.fx._symbolic_trace._is_fx_tracing_flag) is left set")
    for a in _MODULE_ATTRS:
        if torch.nn.Module.__dict__.get(a) is not _original[a]:
            out.append(f"torch.nn.Module.{a} is left patched")
    if getattr(_st, "CURRENT_PATCHER", None) is not None:
        out.append("an FX patcher is left installed (torch.fx._symbolic_trace.CURRENT_PATCHER)")
    if getattr(torch._dynamo.config, _CONFIG_KEY) != _config_default:
        out.append(f"torch._dynamo.config.{_CONFIG_KEY} is left patched "
                   f"({getattr(torch._dynamo.config, _CONFIG_KEY)!r}, was {_config_default!r})")
    if _stance() != "default":
        out.append(f"the compiler stance is left at {_stance()!r} (torch.compiler.set_stance)")
    return out


def traceback_problems():
    """torch.fx.traceback's module globals, when left set. Asked only by the
    workload that races on them (torch_traceback_meta): torch's own compile
    paths may use them outside any lock, and the other workloads' verdicts
    were measured without this check. Its trial reports them as stuck_state,
    which makes the worker replace its process."""
    import torch.fx.traceback as fxt
    out = []
    if getattr(fxt, "should_preserve_node_meta", False):
        out.append("torch.fx.traceback.should_preserve_node_meta is left set")
    if getattr(fxt, "current_meta", None):
        out.append("torch.fx.traceback.current_meta is left set")
    return out


def restore():
    """Puts back what problems() checks, as a fresh process has it. Only for a
    run that is not a trial (a script's native warm-up, whose race may leave
    the flag set): a trial's leftovers are its outcome, never undone."""
    if getattr(_st, "_is_fx_tracing_flag", False):
        _st._is_fx_tracing_flag = False
    for a in _MODULE_ATTRS:
        if torch.nn.Module.__dict__.get(a) is not _original[a]:
            if _original[a] is None:
                delattr(torch.nn.Module, a)
            else:
                setattr(torch.nn.Module, a, _original[a])
    if getattr(_st, "CURRENT_PATCHER", None) is not None:
        _st.CURRENT_PATCHER = None
    if getattr(torch._dynamo.config, _CONFIG_KEY) != _config_default:
        setattr(torch._dynamo.config, _CONFIG_KEY, _config_default)
    if _stance() != "default":
        torch.compiler.set_stance("default")
    import torch.fx.traceback as fxt
    fxt.should_preserve_node_meta = False
    fxt.current_meta = {}


def reset():
    """Fresh compile state for a trial: dynamo's caches and counters, the default config."""
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    torch._dynamo.config.error_on_nested_fx_trace = True
    torch._dynamo.config.error_on_recompile = False


def version():
    return torch.__version__.split("+")[0]


def compile_seconds():
    """Seconds dynamo has spent compiling frames in this process so far, by its
    own timer (torch._dynamo.utils.compilation_time_metrics, each frame's
    compile_inner: tracing, guards and the backend), or None where this torch
    does not keep it. The worker reports the trial's share (worker_ms.compile)."""
    metrics = getattr(getattr(torch._dynamo, "utils", None), "compilation_time_metrics", None)
    if not isinstance(metrics, dict):
        return None
    return float(sum(metrics.get("_compile.compile_inner", ())))  # reset() empties it
