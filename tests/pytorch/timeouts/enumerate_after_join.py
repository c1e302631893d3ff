"""Daemon helpers plus workers; after joining the workers, only the main and daemon threads remain.

  python enumerate_after_join.py [correct|racy]
"""
import sys
import threading

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "correct"
act = torch.compile(lambda x: x.sigmoid(), backend="eager")
stop = threading.Event()
heartbeats = []
processed = []


def heartbeat():
    while not stop.wait(0.5):
        heartbeats.append(1)


def work(i):
    act(torch.ones(2))
    if mode == "racy":
        n = len(processed)
        act(torch.zeros(2))
        processed[n:n] = [i]
        del processed[n + 1:]
    else:
        processed.append(i)


if __name__ == "__main__":
    threading.Thread(target=heartbeat, name="heartbeat", daemon=True).start()
    before = threading.active_count()
    workers = [threading.Thread(target=work, args=(i,), name=f"work-{i}") for i in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=30)
    names = sorted(t.name for t in threading.enumerate())
    assert threading.active_count() == before, names
    assert not any(n.startswith("work-") for n in names), names
    assert sorted(processed) == [0, 1], processed
    stop.set()
