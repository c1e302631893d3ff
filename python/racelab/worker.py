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
import warnings

from . import bridge, sync

EXIT_BAD_INPUT = 3


_warmed = set()


def _run_one(line, monitor, workloads, torch_state):
    spec = json.loads(line)
    name = spec.get("workload", "")
    if name not in workloads.WORKLOADS:
        return {"outcome": "error", "detail": f"bad trial: unknown workload '{name}' in the Python worker",
                "metrics": {"bad_input": True}}
    knobs = dict(workloads.WORKLOADS[name]["knobs"])
    knobs.update(spec.get("knobs") or {})
    warm_key = name + json.dumps(knobs, sort_keys=True)  # a script's knobs name the script
    if warm_key not in _warmed and not torch_state.problems():
        _warmed.add(warm_key)
        try:
            workloads.make_trial(name, knobs, "none", 2, 0, monitor).warm_up()
        except workloads.NotApplicable as e:
            _warmed.discard(warm_key)
            return {"outcome": "error", "detail": f"workload {name}: {e}", "metrics": {"bad_input": True}}
    stale = torch_state.problems()
    torch_state.reset()
    trial = workloads.make_trial(name, knobs, spec.get("mitigation") or "none", int(spec.get("threads", 2)),
                                 int(spec.get("seed", 1)), monitor)
    hits_before = dict(monitor.hits)
    bridge.trial_begin(line)
    bridge.enter_main()
    obs = {"errors": []}
    try:
        if stale:
            obs["stuck_state"] = "; ".join(stale) + " before the trial (the worker was not fresh)"
        else:
            obs = trial.run()
    except bridge.TrialAborted:
        pass
    except BaseException as e:  # noqa: BLE001 -- the body's own failure is an observation
        obs["errors"].append(f"{type(e).__name__}: {e}")
    bridge.exit_main()
    result = bridge.trial_end(obs)
    hits = {k: v - hits_before.get(k, 0) for k, v in monitor.hits.items() if v != hits_before.get(k, 0)}
    result.setdefault("metrics", {})["point_hits"] = hits
    if obs.get("stuck_state"):
        result["process_tainted"] = True  # poisoned: replaced, never trusted
    return result


def main(lib_candidates):
    bridge.load(lib_candidates)
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
    report = monitor.report()
    specs = os.fdopen(3, "r")
    for line in specs:
        trial_no = json.loads(line).get("trial", 0)
        sys.stderr.write(f"@@racelab-trial-begin {trial_no}\n")
        sys.stderr.flush()
        try:
            result = _run_one(line, monitor, workloads, torch_state)
        except bridge.BridgeError as e:
            result = {"outcome": "error", "detail": f"bad trial: {e}", "metrics": {"bad_input": True}}
        result.setdefault("metrics", {})["points"] = report
        result["metrics"]["python"] = sys.version.split()[0]
        sys.stdout.flush()
        sys.stderr.write(f"@@racelab-trial-end {trial_no}\n")
        sys.stderr.flush()
        data = (json.dumps(result) + "\n").encode()
        while data:
            data = data[os.write(4, data):]
        if result.get("process_tainted"):
            sys.stdout.flush()
            os._exit(0)
    return 0
