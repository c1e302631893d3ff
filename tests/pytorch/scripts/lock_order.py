"""Buggy: two threads take two locks in opposite orders; some interleavings deadlock."""
import threading

a, b = threading.Lock(), threading.Lock()


def one():
    with a:
        with b:
            pass


def two():
    with b:
        with a:
            pass


ts = [threading.Thread(target=one, name="takes-a-then-b"), threading.Thread(target=two, name="takes-b-then-a")]
for t in ts:
    t.start()
for t in ts:
    t.join()
