"""The main thread polls a status flag with time.sleep until a monotonic deadline, as health checks do.

  python sleep_poll_deadline.py [correct|racy]
"""
import sys
import threading
import time

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "correct"
warm = torch.compile(lambda x: x.exp(), backend="eager")
status = {"ready": 0, "value": None}


def start_up():
    value = float(warm(torch.zeros(1))[0])
    if mode == "racy":
        status["ready"] += 1  # announced before the value is there
        warm(torch.zeros(2))
        time.sleep(0.1)       # ... and the rest of the start-up takes a while
        status["value"] = value
    else:
        status["value"] = value
        status["ready"] += 1


def wait_ready(timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if status["ready"]:
            return True
        time.sleep(0.05)
    return False


if __name__ == "__main__":
    t0 = time.perf_counter()
    threading.Thread(target=start_up, daemon=True).start()
    if not wait_ready(10):
        raise SystemExit("not ready after 10 s")
    assert status["value"] == 1.0, status
    assert time.perf_counter() >= t0
