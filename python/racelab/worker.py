"""The Python worker: the process racelab's supervisor starts for real-torch trials.

The protocol is the C++ worker's (engine/supervisor.h): a trial spec per line
on fd 3, a result per line on fd 4, every scheduling decision mirrored into
the shared trace on fd 5 (by the library), "@@racelab-trial-begin/end N"
markers on stderr. racelab starts it as

    CMD -c BOOTSTRAP PYTHON_DIR... -- LIB...

(engine/python_host.cpp), where CMD is the user's --python command.

Order matters: racelab.sync is installed before torch is imported, so torch's
own locks (dynamo's compile lock) are controlled ones. A worker whose torch
state is not fresh, before or after a trial, ends after answering, so the
supervisor starts a fresh one.
"""
import json
import os
import sys
import threading

import traceback
import warnings

from . import bridge, sync

EXIT_BAD_INPUT = 3


# The worker's own timings read the real clock: under a scheduler, time.perf_counter
# is the trial's logical clock (racelab.sync).
_clock = sync._real_perf_counter
_warmed = set()
_real_exit = os._exit
_startup_ms = []  # the worker's start (import torch, find the points), reported with its first trial


def _bad_input(detail):
    return {"outcome": "error", "detail": detail, "metrics": {"bad_input": True}}


def _answer(trial_no, result, report):
    """Writes a trial's result (fd 4), between the trial's end marker and the next."""
    result.setdefault("metrics", {})["points"] = report
    result["metrics"]["python"] = sys.version.split()[0]
    sys.stdout.flush()
    sys.stderr.write(f"@@racelab-trial-end {trial_no}\n")
    sys.stderr.flush()
    data = (json.dumps(result) + "\n").encode()
    while data:
        data = data[os.write(4, data):]


def _thread_stacks(depth=4):
    """'name (waits on X): file:line fn <- ...' for every managed thread: where
    the engine found it when it abandoned the trial (bridge.aborted_at), or,
    for one still running, where it is now. Innermost frames first; racelab's
    own frames are left out."""
    out, seen = [], set()

    def frames_of(f):
        where = []
        for fs in reversed(traceback.extract_stack(f)):
            if "/racelab/" in fs.filename.replace(os.sep, "/"):
                continue
            where.append(f"{os.path.basename(fs.filename)}:{fs.lineno} {fs.name}")
            if len(where) >= depth:
                break
        return " <- ".join(where) or "(no Python frame)"

    def name(what):
        return what.decode(errors="replace") if isinstance(what, bytes) else str(what)

    for ident, (tname, what, frame) in bridge.aborted_at.items():
        seen.add(ident)
        out.append(f"{tname}" + (f" (at {name(what)})" if what else "") + f": {frames_of(frame)}")
    current = sys._current_frames()
    for t in threading.enumerate():
        if t.ident in seen or t.ident not in current or getattr(t, "_racelab_id", -1) < 0:
            continue
        out.append(f"{t.name} (running): {frames_of(current[t.ident])}")
    return out


def _run_one(line, monitor, workloads, torch_state, finish):
    spec = json.loads(line)
    name = spec.get("workload", "")
    if name not in workloads.WORKLOADS:
        return _bad_input(f"bad trial: unknown workload '{name}' in the Python worker")
    knobs = dict(workloads.WORKLOADS[name]["knobs"])
    knobs.update(spec.get("knobs") or {})
    mitigation, threads, seed = spec.get("mitigation") or "none", int(spec.get("threads", 2)), int(spec.get("seed", 1))
    try:
        trial = workloads.make_trial(name, knobs, mitigation, threads, seed, monitor)
    except workloads.BadScript as e:
        return _bad_input(str(e))
    t0 = _clock()
    took = {}  # where the trial's time went (ms), in its metrics: bench and the closing note read it
    warm_key = name + json.dumps(knobs, sort_keys=True)  # a script's knobs name the script
    if warm_key not in _warmed and not torch_state.problems():
        _warmed.add(warm_key)
        try:
            if isinstance(trial, workloads.ScriptTrial):
                limit = float(spec.get("watchdog_s", 30.0))
                trial.warm_up(limit, on_stuck=lambda why: finish(_bad_input(why), exit_after=True))
            else:
                workloads.make_trial(name, knobs, "none", 2, 0, monitor).warm_up()
        except workloads.NotApplicable as e:
            _warmed.discard(warm_key)
            return _bad_input(f"workload {name}: {e}")
        took["warm_up"] = (_clock() - t0) * 1e3
    t1 = _clock()
    stale = torch_state.problems()
    torch_state.reset()
    took["reset"] = (_clock() - t1) * 1e3
    hits_before = dict(monitor.hits)
    strategy = spec.get("strategy")
    bridge.trial_scheduled = not (isinstance(strategy, dict) and strategy.get("kind") == "free")
    bridge.aborted_at.clear()
    bridge.unwind_leftover(False)
    sync.begin_trial()  # the logical clocks start from now
    bridge.trial_begin(line)
    bridge.enter_main()
    obs = {"errors": []}

    def script_exit(status):
        # os._exit(status) from the script (any thread): the process would end
        # here, every thread with it. The trial ends as exec's does for that
        # exit status, the worker answers and exits (the process is not reused).
        expected = getattr(trial, "expect_exit", 0)
        errors = list(getattr(trial, "errors", [])) + ([f"exit status {status} (expected {expected})"]
                                                 if status != expected else [])
        result = bridge.trial_end({"errors": errors, "metrics": {"torch": torch_state.version()}})
        result["process_tainted"] = True
        finish(result, exit_after=True)

    if isinstance(trial, workloads.ScriptTrial):
        os._exit = script_exit
    t2 = _clock()
    compiled_before = torch_state.compile_seconds()
    try:
        if stale:
            obs["stuck_state"] = "; ".join(stale) + " before the trial (the worker was not fresh)"
        else:
            obs = trial.run()
    except bridge.TrialAborted:
        pass
    except BaseException as e:  # noqa: BLE001 -- the body's own failure is an observation
        obs["errors"].append(f"{type(e).__name__}: {e}")
    finally:
        os._exit = _real_exit
    try:
        bridge.exit_main()
    except bridge.TrialAborted:
        pass
    took["body"] = (_clock() - t2) * 1e3
    compiled_after = torch_state.compile_seconds()
    if compiled_before is not None and compiled_after is not None:
        # Part of the body: the frames dynamo compiled in this trial (the
        # list only grows; a shorter one was reset, and all of it is new).
        took["compile"] = (compiled_after - (compiled_before if compiled_after >= compiled_before else 0)) * 1e3
    t3 = _clock()
    # Still running (not yet abandoned) threads show where they are now; the
    # rest were noted as the engine abandoned them (bridge.aborted_at).
    running = _thread_stacks()
    result = bridge.trial_end(obs)
    stacks = _thread_stacks() if result.get("outcome") == "hang" else []
    stacks += [s for s in running if "(running)" in s and s.split(" (")[0] not in {x.split(" (")[0] for x in stacks}]
    if result.get("outcome") == "hang" and stacks:
        result["detail"] = result.get("detail", "") + "; threads: " + "; ".join(stacks)
        result.setdefault("metrics", {})["thread_stacks"] = stacks
    if isinstance(trial, workloads.ScriptTrial) and not trial.finish_leftover():
        result["process_tainted"] = True  # a daemon thread would not unwind
    hits = {k: v - hits_before.get(k, 0) for k, v in monitor.hits.items() if v != hits_before.get(k, 0)}
    result.setdefault("metrics", {})["point_hits"] = hits
    took["end"] = (_clock() - t3) * 1e3
    result["metrics"]["worker_ms"] = {k: round(v, 2) for k, v in took.items()}
    if _startup_ms:
        result["metrics"]["worker_ms"]["startup"] = round(_startup_ms.pop(), 2)
    if obs.get("stuck_state"):
        result["process_tainted"] = True  # poisoned: replaced, never trusted
    return result


def main(lib_candidates):
    started = _clock()
    try:
        bridge.load(lib_candidates)
    except (bridge.BridgeError, OSError) as e:
        # A host library that is not there, or one this Python cannot load
        # (another architecture, a C library too old): the worker cannot start.
        print(f"racelab.worker: this Python ({sys.executable}) cannot load racelab's host library: {e}",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if not bridge.worker_open():
        print("racelab.worker: started only by racelab's supervisor (racelab run --python CMD ...)", file=sys.stderr)
        return EXIT_BAD_INPUT
    sync.install()  # before torch
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # fork() in a threaded process
    try:
        import torch
    except ImportError as e:
        print(f"racelab.worker: this Python ({sys.executable}) has no torch: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    torch.set_num_threads(1)  # no intra-op pool: compute never fans out, fork stays safe
    from . import points, torch_state, workloads
    monitor = points.Monitor()
    monitor.discover()
    monitor.install(os.environ.get("RACELAB_PY_POINTS") or None)
    import racelab
    racelab._hit = monitor._hit  # racelab.point() from a script
    report = monitor.report()
    _startup_ms.append((_clock() - started) * 1e3)
    specs = os.fdopen(3, "r")
    for line in specs:
        trial_no = json.loads(line).get("trial", 0)
        sys.stderr.write(f"@@racelab-trial-begin {trial_no}\n")
        sys.stderr.flush()

        def finish(result, exit_after=False, trial_no=trial_no):
            _answer(trial_no, result, report)
            if exit_after or result.get("process_tainted"):
                sys.stdout.flush()
                _real_exit(0)

        try:
            result = _run_one(line, monitor, workloads, torch_state, finish)
        except bridge.BridgeError as e:
            result = _bad_input(f"bad trial: {e}")
        finish(result)
    return 0
