"""Correct: a thread spins on a plain global with no call racelab sees (no
sleep, no Event) until the main thread, which waits for it to start, clears
the flag: only a let-go by the spinner's CPU time lets the main thread run."""
import threading

running = True
started = threading.Event()
spins = 0


def spin():
    global spins
    started.set()
    while running:
        spins += 1


t = threading.Thread(target=spin)
t.start()
started.wait()
running = False
t.join()
assert spins >= 0
