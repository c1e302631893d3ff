"""A training module with slow module-level set-up, and the step that races.

Written as a team writes the module its tests import: the set-up (here a pause standing for
loading data and building the model) runs at import; `train_step_racy` runs two threads through
freshly compiled functions (the FX-flag race), `train_step_locked` takes one lock around them."""
import threading

import torch

# Loading, building, warming (about 3 s of CPU here): paid once per process by a function
# trial, once per run by a script trial. Real work, not a sleep: under racelab a sleep
# passes in logical time.
_state = torch.randn(512, 512, generator=torch.Generator().manual_seed(0))
for _ in range(60):
    _state = torch.tanh(_state @ _state)
WEIGHT = torch.ones(4) + 0 * _state[0, :4]
_lock = threading.Lock()


def _step(i, lock, errors):
    f = torch.compile(lambda x: torch.sin(x * WEIGHT[0]) * (i + 1), backend="aot_eager")
    try:
        for n in (4, 8):
            if lock is None:
                f(torch.ones(n))
            else:
                with lock:
                    f(torch.ones(n))
    except Exception as e:  # noqa: BLE001
        errors.append(f"{type(e).__name__}: {e}")


def _run(lock):
    errors = []
    threads = [threading.Thread(target=_step, args=(i, lock, errors)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def train_step_racy():
    _run(None)


def train_step_locked():
    _run(_lock)


def train_step_with(batch_size):
    _run(None)


if __name__ == "__main__":
    train_step_racy()
