"""pytest plugin: a test marked racelab runs as racelab trials (racelab pyrun FILE::TEST).

    pytest -p racelab.pytest_plugin                      # the tests marked @pytest.mark.racelab
    pytest -p racelab.pytest_plugin --racelab-trials 50  # every test, 50 trials each

    @pytest.mark.racelab(trials=50, strategy="auto", seed=1)
    def test_two_drafters_train():
        ...

A marked test (or, with --racelab-trials, every test) is run by
`racelab pyrun -n TRIALS -s STRATEGY --seed SEED --python <this interpreter> --
FILE::TEST`: the test module is imported once per racelab worker, natively, and
each trial calls the test function with its threads under racelab's control.
The test passes when every trial holds. When one does not, the test fails with
racelab's verdict, the failing trial and its `racelab replay racelab1:...` line,
which replays that interleaving exactly. Unmarked tests run as pytest runs
them. racelab is $RACELAB, else `racelab` on PATH.

A trial calls the test with no arguments: a test that takes fixtures is
reported as such (racelab names them), as is a test method of a class. A
test's own timeouts, threads and pools behave under control as natively
(docs/USING.md, "Timeouts under control").
"""
import os
import shlex
import shutil
import subprocess
import sys

import pytest

_DEFAULTS = {"trials": 20, "strategy": "auto", "seed": 1}


def pytest_addoption(parser):
    group = parser.getgroup("racelab", "racelab: tests as race trials")
    group.addoption("--racelab-trials", type=int, default=None,
                    help="run every test as this many racelab trials (marked tests: their own count otherwise)")
    group.addoption("--racelab-strategy", default=None, help="racelab's strategy (default: auto)")
    group.addoption("--racelab-seed", type=int, default=None, help="racelab's cell seed (default: 1)")


def pytest_configure(config):
    config.addinivalue_line("markers", "racelab(trials=20, strategy='auto', seed=1): run this test as racelab "
                                       "trials (racelab pyrun FILE::TEST), each with its threads under control")


def _racelab():
    exe = os.environ.get("RACELAB") or shutil.which("racelab")
    if not exe:
        raise pytest.UsageError("racelab.pytest_plugin: no racelab: set $RACELAB or put racelab on PATH")
    return exe


class RacelabFailure(Exception):
    """racelab found a trial that does not hold (its report is the message)."""


class RacelabItem(pytest.Item):
    """A test function run as racelab trials."""

    def __init__(self, *, original, trials, strategy, seed, **kwargs):
        super().__init__(**kwargs)
        self.original = original
        self.trials, self.strategy, self.seed = trials, strategy, seed
        self.own_markers = list(original.own_markers)
        self.keywords.update(original.keywords)

    def runtest(self):
        path = str(self.original.path)
        if self.original.cls is not None:
            raise RacelabFailure(f"racelab runs test functions of a module; {self.original.nodeid} is a method "
                                 f"of class {self.original.cls.__name__}")
        fixtures = [f for f in getattr(self.original, "fixturenames", []) if f != "request"]
        argv = [_racelab(), "pyrun", "-n", str(self.trials), "-s", self.strategy, "--seed", str(self.seed),
                "--no-progress", "--python", shlex.quote(sys.executable), "--", f"{path}::{self.original.name}"]
        run = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             cwd=str(self.config.rootpath))
        if run.returncode == 0:
            self.add_report_section("call", "racelab", run.stdout)  # what the pass rests on
            return
        if run.returncode == 1:
            raise RacelabFailure(run.stdout)
        hint = f" (the test takes fixtures: {', '.join(fixtures)})" if fixtures else ""
        raise RacelabFailure(f"racelab could not run {self.original.nodeid}{hint}, exit {run.returncode}:\n"
                             f"{run.stdout}")

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, RacelabFailure):
            return f"racelab: {self.original.nodeid}:\n{excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.original.path, None, f"{self.original.name} [racelab {self.trials} trials, {self.strategy}]"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    every = config.getoption("--racelab-trials")
    for i, item in enumerate(items):
        if not isinstance(item, pytest.Function):
            continue
        marker = item.get_closest_marker("racelab")
        if marker is None and every is None:
            continue
        opts = dict(_DEFAULTS)
        if marker is not None:
            opts.update(marker.kwargs)
        if every is not None and (marker is None or "trials" not in marker.kwargs):
            opts["trials"] = every
        if config.getoption("--racelab-strategy"):
            opts["strategy"] = config.getoption("--racelab-strategy")
        if config.getoption("--racelab-seed") is not None:
            opts["seed"] = config.getoption("--racelab-seed")
        items[i] = RacelabItem.from_parent(item.parent, name=item.name, original=item, trials=int(opts["trials"]),
                                           strategy=str(opts["strategy"]), seed=int(opts["seed"]))
