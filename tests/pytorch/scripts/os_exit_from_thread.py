"""Correct: a worker thread finishes the job and ends the process with os._exit(0) while the
main thread waits on an Event that nobody sets (a shutdown path some servers take)."""
import os
import threading

import torch

done = threading.Event()


def finish():
    torch.ones(2).sum()
    os._exit(0)


if __name__ == "__main__":
    threading.Thread(target=finish).start()
    done.wait()
    raise SystemExit("the worker should have ended the process")
