"""Two workers, joined with a timeout, then checked: the usual 'did they finish?' guard.

  python join_timeout.py [correct|racy]
"""
import sys
import threading

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "correct"
scale = torch.compile(lambda x: x * 2 + 1, backend="eager")
done = 0
done_lock = threading.Lock()


def work():
    global done
    if mode == "racy":  # read, compile, write: another worker's update can be lost
        seen = done
        scale(torch.ones(4))
        done = seen + 1
    else:
        scale(torch.ones(4))
        with done_lock:
            done += 1


if __name__ == "__main__":
    workers = [threading.Thread(target=work, name=f"worker-{i}") for i in range(2)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=60)
    alive = [t.name for t in workers if t.is_alive()]
    if alive:
        raise SystemExit(f"threads still alive after 60 s: {alive}")
    assert done == 2, f"{done} of 2 workers counted"
