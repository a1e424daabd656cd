"""AsyncAgenticMemory: the API as coroutines, run on a bounded pool, never on the event loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from amem_graph import AgenticMemory, AsyncAgenticMemory, InvalidInput, Settings
from amem_graph.bench.scripted_llm import ScriptedLLM

from .test_background import TEXTS, opened, queued

STORES = ("neo4j", "embedded")
pytestmark = pytest.mark.usefixtures("no_queue_elsewhere")


async def test_the_api_as_coroutines(memory: AgenticMemory) -> None:
    async with AsyncAgenticMemory(memory, max_workers=2) as aio:
        notes = await asyncio.gather(*[aio.add(text) for text in TEXTS])
        hits = await aio.search("What is the beagle called?", k=3)
        assert hits[0].note.id in {n.id for n in notes}
        assert (await aio.get(notes[0].id)).content == TEXTS[0]
        await aio.update(notes[0].id, tags=["dogs"])
        assert (await aio.history(notes[0].id)).versions
        assert await aio.wait(1) and await aio.pending() == 0
        with pytest.raises(InvalidInput):
            await aio.add("")
    assert memory.get(notes[0].id).tags == ("dogs",)  # the memory itself stays open: it is the caller's


async def test_calls_run_off_the_loop_and_the_loop_goes_on(memory: AgenticMemory, settings: Settings,
                                                           llm: ScriptedLLM) -> None:
    loop_thread = threading.get_ident()
    ran_on: set[int] = set()
    real_search = memory.search

    def search(*args: object, **kwargs: object) -> object:
        ran_on.add(threading.get_ident())
        return real_search(*args, **kwargs)  # type: ignore[arg-type]

    ticks = 0

    async def ticking(stop: asyncio.Event) -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0)

    memory.search = search  # type: ignore[method-assign]
    with opened(memory, queued(settings, llm)) as mem:
        mem.search = search  # type: ignore[method-assign]
        async with AsyncAgenticMemory(mem, max_workers=3) as aio:
            stop = asyncio.Event()
            ticker = asyncio.create_task(ticking(stop))
            await asyncio.gather(*[aio.add(t) for t in TEXTS], *[aio.search(t) for t in TEXTS])
            stop.set()
            await ticker
            assert await aio.wait(30)  # the queued analyses, waited for without holding a thread
    assert ran_on and loop_thread not in ran_on and len(ran_on) <= 3
    assert ticks > 0  # the loop ran other tasks while the calls were under way


async def test_open_and_close_own_the_memory(settings: Settings, tenant: str, store_kind: str) -> None:
    if store_kind == "embedded":
        pytest.skip("the test session's embedded store is held open by this process")
    aio = await AsyncAgenticMemory.open(settings, tenant=tenant)
    try:
        note = await aio.add("Alice adopted a beagle named Max.")
        assert (await aio.get(note.id)).id == note.id and aio.tenant == tenant
    finally:
        await aio.call(aio.memory.admin.delete_tenant, tenant)
        await aio.close()
