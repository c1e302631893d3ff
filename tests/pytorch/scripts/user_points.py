"""Points of the user's own: step() is named by --points, and racelab.point
marks a place by hand (a no-op, or no import, when racelab does not run it)."""
import threading

try:
    import racelab
    mark = racelab.point
except ImportError:
    def mark(name):
        pass

total = []


def step(i):
    mark("user_points.before_append")
    total.append(i)


ts = [threading.Thread(target=step, args=(i,)) for i in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert sorted(total) == [0, 1]
