"""Correct: a daemon thread that serves forever; the script ends without stopping it."""
import queue
import threading

import torch

requests = queue.Queue()
answers = queue.Queue()


def server():
    while True:
        x = requests.get()
        answers.put(x + 1)


threading.Thread(target=server, daemon=True).start()
for i in range(3):
    requests.put(torch.tensor(float(i)))
    assert float(answers.get()) == i + 1
