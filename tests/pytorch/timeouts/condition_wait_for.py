"""Producers add results under a Condition; the consumer waits for all of them with wait_for(timeout).

  python condition_wait_for.py [correct|racy]
"""
import sys
import threading

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "correct"
double = torch.compile(lambda x: x + x, backend="eager")
cond = threading.Condition()
results = []
counted = [0]


def produce(i):
    y = double(torch.full((2,), float(i)))
    if mode == "racy":  # the count is read outside the lock, written inside
        n = counted[0]
        with cond:
            results.append(float(y[0]))
            counted[0] = n + 1
            cond.notify_all()
    else:
        with cond:
            results.append(float(y[0]))
            counted[0] += 1
            cond.notify_all()


if __name__ == "__main__":
    threads = [threading.Thread(target=produce, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    with cond:
        ok = cond.wait_for(lambda: len(results) == 3, timeout=20)
    if not ok:
        raise SystemExit(f"only {len(results)} of 3 results after 20 s")
    for t in threads:
        t.join()
    assert sorted(results) == [0.0, 2.0, 4.0], results
    assert counted[0] == 3, f"counted {counted[0]} of 3"
