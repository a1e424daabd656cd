"""AsyncAgenticMemory: the public API as coroutines, for asyncio applications.

Each call runs the memory's synchronous call on a bounded pool of threads of its own, never on the event loop: the
loop goes on serving other tasks while a call waits on the store or embeds, and at most `max_workers` calls run at
once (the rest queue for a thread instead of piling threads up). With an LLM configured, writes return before the
model's analysis as they do synchronously (docs/write-path.md); `wait` waits for it without holding a thread."""

from __future__ import annotations

import asyncio
import inspect
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from .api import AgenticMemory
from .settings import Settings

T = TypeVar("T")
MAX_WORKERS = 8  # calls running at once; more wait for a thread
SWITCH_INTERVAL_S = 0.001  # how long a thread may hold the interpreter while the event loop waits for it
WAIT_POLL_S = 0.05


def _coroutine(name: str) -> Callable[..., Any]:
    """`AgenticMemory.<name>` as a coroutine method run on the pool: same parameters, same documentation."""
    sync = getattr(AgenticMemory, name)

    async def method(self: AsyncAgenticMemory, *args: Any, **kwargs: Any) -> Any:
        return await self.call(getattr(self.memory, name), *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = sync.__doc__
    method.__signature__ = inspect.signature(sync)  # type: ignore[attr-defined]
    return method


class AsyncAgenticMemory:
    """`await memory.add(...)`, `await memory.search(...)`: AgenticMemory's calls as coroutines.

    >>> memory = await AsyncAgenticMemory.open(tenant="alice")
    >>> async with memory:
    ...     await memory.add("Alice adopted a beagle named Max.")
    ...     hits = await memory.search("What is Alice's dog called?")
    """

    def __init__(self, memory: AgenticMemory, *, max_workers: int = MAX_WORKERS, owned: bool = False,
                 switch_interval: float | None = SWITCH_INTERVAL_S) -> None:
        """Coroutines over `memory` (several may share it); `owned`: `close` closes it too. The pool's threads run
        Python code too, and the event loop waits for the interpreter while one of them holds it, up to the
        interpreter's switch interval each time (5 ms by default, and several times over with several threads):
        `switch_interval` lowers it for the process (`sys.setswitchinterval`) when it is longer; None leaves it."""
        self.memory = memory
        self._owned = owned
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="amem-async")
        if switch_interval is not None and sys.getswitchinterval() > switch_interval:
            sys.setswitchinterval(switch_interval)

    @classmethod
    async def open(cls, settings: Settings | None = None, *, tenant: str | None = None,
                   max_workers: int = MAX_WORKERS, **options: Any) -> AsyncAgenticMemory:
        """Open a memory (the store, the embedding model) off the loop; `options` as AgenticMemory takes them."""
        memory = await asyncio.to_thread(partial(AgenticMemory, settings, tenant=tenant, **options))
        return cls(memory, max_workers=max_workers, owned=True)

    @property
    def tenant(self) -> str:
        return self.memory.tenant

    async def call(self, function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Any blocking call (of this memory, or an adapter's over it) on the pool."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, partial(function, *args, **kwargs))

    add = _coroutine("add")
    add_many = _coroutine("add_many")
    get = _coroutine("get")
    update = _coroutine("update")
    delete = _coroutine("delete")
    link = _coroutine("link")
    supersede = _coroutine("supersede")
    list = _coroutine("list")
    search = _coroutine("search")
    context = _coroutine("context")
    add_turn = _coroutine("add_turn")
    context_for = _coroutine("context_for")
    respond = _coroutine("respond")
    history = _coroutine("history")
    revert = _coroutine("revert")
    reanalyze = _coroutine("reanalyze")
    pending = _coroutine("pending")
    queue = _coroutine("queue")
    stats = _coroutine("stats")

    async def wait(self, timeout: float | None = None, *, tenant: str | None = None) -> bool:
        """Wait until no note of the tenant waits for its analysis (True), or `timeout` seconds pass (False); the
        loop and the pool stay free meanwhile."""
        deadline = None if timeout is None else asyncio.get_running_loop().time() + max(0.0, timeout)
        if await self.call(self.memory.wait, 0, tenant=tenant):  # (which also wakes this process's worker)
            return True
        while await self.pending(tenant=tenant):
            if deadline is not None and asyncio.get_running_loop().time() >= deadline:
                return False
            await asyncio.sleep(WAIT_POLL_S)
        return True

    async def close(self) -> None:
        """Let the calls under way end; close the memory if this opened it."""
        await asyncio.to_thread(self._pool.shutdown, wait=True)
        if self._owned:
            await asyncio.to_thread(self.memory.close)

    async def __aenter__(self) -> AsyncAgenticMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
