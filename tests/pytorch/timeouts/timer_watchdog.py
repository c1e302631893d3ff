"""A threading.Timer is a watchdog for a compile step; the step finishes and cancels it.

  python timer_watchdog.py [correct|racy]
"""
import sys
import threading

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "correct"
fwd = torch.compile(torch.nn.Linear(3, 3), backend="eager")
fired = []
steps = 0
steps_lock = threading.Lock()


def too_slow():
    fired.append("the compile step took over 20 s")


def worker(i):
    with torch.no_grad():
        fwd(torch.ones(1, 3))
    global steps
    if mode == "racy":  # read, call, write: one step's count can be lost
        n = steps
        fwd(torch.ones(2, 3))
        steps = n + 1
    else:
        with steps_lock:
            steps += 1


if __name__ == "__main__":
    watchdog = threading.Timer(20.0, too_slow)
    watchdog.start()
    workers = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    watchdog.cancel()
    watchdog.join()
    assert not fired, fired
    assert steps == 2, f"{steps} of 2 steps counted"
