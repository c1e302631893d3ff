"""Correct: a producer process feeds a queue; the main process compiles and consumes, then
joins the producer with a timeout and checks that it ended."""
import multiprocessing as mp
import queue

import torch

step = torch.compile(lambda x: x.cumsum(0), backend="eager")


def produce(q, n):
    for i in range(n):
        q.put([float(i)] * 3)
    q.put(None)


if __name__ == "__main__":
    q = mp.Queue()
    producer = mp.Process(target=produce, args=(q, 4), name="producer")
    producer.start()
    total = 0.0
    while True:
        try:
            item = q.get(timeout=60)
        except queue.Empty:
            raise SystemExit("the producer went silent")
        if item is None:
            break
        total += float(step(torch.tensor(item))[-1])
    producer.join(timeout=60)
    if producer.is_alive():
        raise SystemExit("producer still alive after join(timeout=60)")
    assert producer.exitcode == 0, producer.exitcode
    assert total == 18.0, total
