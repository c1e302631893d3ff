"""Correct: an asyncio service runs its compiled model in worker threads (asyncio.to_thread)."""
import asyncio

import torch

predict = torch.compile(lambda x: x + 1, backend="eager")


def infer(i):
    return float(predict(torch.full((1,), float(i)))[0])


async def main():
    got = await asyncio.gather(*(asyncio.to_thread(infer, i) for i in range(2)))
    assert sorted(got) == [1.0, 2.0], got
    loop = asyncio.get_running_loop()
    more = await asyncio.wait_for(loop.run_in_executor(None, infer, 5), timeout=30)
    assert more == 6.0, more


if __name__ == "__main__":
    asyncio.run(main())
