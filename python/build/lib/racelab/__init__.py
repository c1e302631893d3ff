"""racelab's Python host: real torch.compile, FX and flex_attention under racelab's scheduler.

A Python process started by racelab's supervisor (``racelab run --python CMD``)
is a racelab worker like the C++ one: it reads trial specs, runs each trial's
threads under the engine's strategies through the C ABI of
``libracelab_host.so`` (racelab/host.h, loaded with ctypes), and answers with
results that go into the same JSONL, replay, minimisation and reports.

Modules, one concept each:
  bridge      the ctypes bridge: trials, points, managed threads
  sync        controlled threading.Lock/RLock/Condition (Event, Semaphore on top)
  points      interleaving points placed in torch by name (sys.monitoring, or
              sys.settrace before Python 3.12)
  torch_state the state a trial must leave as it found it, and its oracles
  mitigations what users put around torch.compile, on real torch
  workloads   the catalogue's races on real torch (names: workloads.json)
  script      a user's own script as a trial body (racelab pyrun)
  worker      the worker loop the supervisor talks to

From a user's script: ``racelab.point("name")`` is an interleaving point where
racelab runs the script, and a no-op anywhere else.
"""


_hit = None  # the worker's points.Monitor._hit: counts the hit (metrics.point_hits) and passes the point


def point(name):
    """An interleaving point named `name` in the calling thread (racelab pyrun);
    a no-op when racelab does not run the script."""
    if _hit is not None:
        _hit(name, name.encode())
