"""Two worker threads, each with its own compiled function, called with two input sizes.

Written without racelab in mind: it applies no fix and reads no environment. A compile traces
with FX (AOTAutograd), which sets torch's process-wide tracing flag; the other thread's compiled
call checks that flag and raises "Detected that you are using FX to symbolically trace a
dynamo-optimized function"."""
import threading

import torch


def worker(i, errors):
    f = torch.compile(lambda x: torch.sin(x) * (i + 1), backend="aot_eager")
    try:
        for n in (4, 8, 4, 8):
            f(torch.ones(n))
    except Exception as e:  # noqa: BLE001 -- reported below, as a user's script would
        errors.append(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    errors = []
    threads = [threading.Thread(target=worker, args=(i, errors)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(errors[0])
