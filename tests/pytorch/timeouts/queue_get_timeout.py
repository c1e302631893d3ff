"""A worker consumes requests from a queue.Queue with get(timeout) until a sentinel.

  python queue_get_timeout.py [correct|racy]
"""
import queue
import sys
import threading

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "correct"
step = torch.compile(lambda x: x.relu().sum(), backend="eager")
requests = queue.Queue()
answers = []
served = {"n": 0}
failures = []


def serve():
    while True:
        try:
            item = requests.get(timeout=5)
        except queue.Empty:
            failures.append("no request for 5 s")
            return
        if item is None:
            return
        answers.append(float(step(item)))
        if mode == "racy":
            n = served["n"]
            step(item)
            served["n"] = n + 1
        else:
            served["n"] += 1


if __name__ == "__main__":
    workers = [threading.Thread(target=serve) for _ in range(2)]
    for w in workers:
        w.start()
    for i in range(4):
        requests.put(torch.full((3,), float(i) - 1))
    for _ in workers:
        requests.put(None)
    for w in workers:
        w.join()
    assert not failures, failures
    assert sorted(answers) == [0.0, 0.0, 3.0, 6.0], answers
    assert served["n"] == 4, f"served {served['n']} of 4"
