"""A team's pytest tests of a threaded serving path, written without racelab in mind but for
the marks. Two request threads each get a freshly compiled handler; `test_handlers_race` runs
them as the code first shipped, `test_handlers_locked` with one lock around the compiled
calls (the fix). Under racelab the first fails with the FX-flag error and a replay line; the
second holds."""
import threading

import pytest
import torch

SCALE = torch.tensor(2.0)  # module-level set-up: paid once per racelab worker


def _serve(lock):
    errors = []

    def handle(i):
        h = torch.compile(lambda x: torch.cos(x) * SCALE * (i + 1), backend="aot_eager")
        try:
            for n in (4, 8):
                if lock is None:
                    h(torch.ones(n))
                else:
                    with lock:
                        h(torch.ones(n))
        except Exception as e:  # noqa: BLE001
            errors.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=handle, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors[0]


@pytest.mark.racelab(strategy="random")
def test_handlers_race():
    _serve(None)


@pytest.mark.racelab(strategy="random")
def test_handlers_locked():
    _serve(threading.Lock())


def test_plain_arithmetic():
    assert 1 + 1 == 2
