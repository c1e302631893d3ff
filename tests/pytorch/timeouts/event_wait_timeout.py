"""A loader thread signals readiness with an Event; the main thread waits for it with a timeout.

  python event_wait_timeout.py [correct|racy]
"""
import sys
import threading

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "correct"
model = torch.compile(torch.nn.Linear(4, 4), backend="eager")
ready = threading.Event()
state = {"loaded": 0}


def loader():
    with torch.no_grad():
        model(torch.ones(1, 4))
    if mode == "racy":
        ready.set()  # signalled before the state it announces is written
        model(torch.ones(2, 4))
        state["loaded"] += 1
    else:
        state["loaded"] += 1
        ready.set()


def main():
    t = threading.Thread(target=loader, daemon=True)
    t.start()
    if not ready.wait(timeout=30):
        raise SystemExit("loader not ready after 30 s")
    assert state["loaded"] == 1, "ready, but nothing loaded"
    t.join()


if __name__ == "__main__":
    main()
