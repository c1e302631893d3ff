"""Workers take a shared cache lock with a timeout, and give up (logging) if it is busy too long.

  python lock_acquire_timeout.py [correct|racy]
"""
import sys
import threading

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "correct"
embed = torch.compile(torch.nn.Embedding(10, 4), backend="eager")
cache_lock = threading.Lock()
cache = {}
misses = []


def fill(key):
    if mode == "racy" and key not in cache:  # checked outside the lock, filled inside: both fill
        with torch.no_grad():
            value = embed(torch.tensor([key]))
        with cache_lock:
            misses.append(key)
            cache[key] = value
        return
    if not cache_lock.acquire(timeout=10):
        raise RuntimeError("cache lock busy for 10 s")
    try:
        if key not in cache:
            with torch.no_grad():
                cache[key] = embed(torch.tensor([key]))
            misses.append(key)
    finally:
        cache_lock.release()


if __name__ == "__main__":
    threads = [threading.Thread(target=fill, args=(3,)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert misses == [3], f"filled {len(misses)} times: {misses}"
