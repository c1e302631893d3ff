"""At most one thread at a time may run the model: a Semaphore taken with a timeout.

  python semaphore_timeout.py [correct|racy]
"""
import sys
import threading

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "correct"
run = torch.compile(lambda x: x.tanh(), backend="eager")
slots = threading.BoundedSemaphore(1)
inside = [0]
most_inside = [0]


def request():
    if mode == "correct" and not slots.acquire(timeout=15):
        raise RuntimeError("no slot for 15 s")
    try:
        inside[0] += 1
        most_inside[0] = max(most_inside[0], inside[0])
        run(torch.ones(3))
        inside[0] -= 1
    finally:
        if mode == "correct":
            slots.release()


if __name__ == "__main__":
    threads = [threading.Thread(target=request) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most_inside[0] == 1, f"{most_inside[0]} threads ran the model at once"
