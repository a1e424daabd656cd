"""`bench async`: whether AsyncAgenticMemory keeps an asyncio application responsive. A probe task sleeps 1 ms
again and again and records how late each wake-up is (the event loop's lag) while `calls` adds and `calls` searches
run concurrently through AsyncAgenticMemory; beside it, the same calls made synchronously from a coroutine, which
block the loop for as long as each takes. Writes queue their analysis for a scripted model on loopback, served by a
process of its own (as a remote model's work would not, its work does not compete with the loop here)."""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from dataclasses import replace
from typing import Any

import numpy as np

from ..aio import AsyncAgenticMemory
from ..api import AgenticMemory
from ..settings import LLMSettings, Settings
from .scripted_llm import served_apart
from .texts import sentences

PROBE_S = 0.001  # the probe's sleep


async def _probe(stop: asyncio.Event, lags_ms: list[float]) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        began = loop.time()
        await asyncio.sleep(PROBE_S)
        lags_ms.append((loop.time() - began - PROBE_S) * 1000)


def _lags(lags_ms: list[float]) -> dict[str, float]:
    data = np.asarray(lags_ms or [0.0])
    return {"max": round(float(data.max()), 3), "p99": round(float(np.percentile(data, 99)), 3),
            "p50": round(float(np.percentile(data, 50)), 3), "wakeups": int(data.size)}


async def _measured(work: Any) -> tuple[dict[str, float], float]:
    stop, lags = asyncio.Event(), []
    probe = asyncio.create_task(_probe(stop, lags))
    await asyncio.sleep(0.05)  # the probe runs before the calls begin
    began = time.perf_counter()
    await work()
    seconds = time.perf_counter() - began
    stop.set()
    await probe
    return _lags(lags), seconds


def run(settings: Settings, *, calls: int = 50, latency_s: float = 1.5, max_workers: int = 8) -> dict[str, Any]:
    texts = sentences(3 * calls, seed=11)
    tenant = f"bench-async-{uuid.uuid4().hex[:10]}"
    with served_apart(latency_s) as base_url:  # a model elsewhere: its work takes nothing from this process
        configured = replace(settings, llm=LLMSettings(base_url=base_url, model="scripted", backoff_s=0.0,
                                                       timeout_s=60.0))
        with AgenticMemory(configured, tenant=tenant) as memory:
            try:
                return asyncio.run(_compare(memory, texts, calls, max_workers))
            finally:
                memory.admin.delete_tenant(tenant)


async def _compare(memory: AgenticMemory, texts: list[str], calls: int, max_workers: int) -> dict[str, Any]:
    async with AsyncAgenticMemory(memory, max_workers=max_workers) as aio:
        async def concurrent(batch: list[str]) -> None:
            await asyncio.gather(*[aio.add(t) for t in batch], *[aio.search(t[:40], k=5) for t in batch])

        # A round not counted: planned statements, the model's first runs, tables read once; then its analyses.
        await concurrent(texts[2 * calls : 3 * calls])
        await aio.wait(600)

        async def blocking() -> None:
            for text in texts[calls : 2 * calls]:
                memory.add(text)
                memory.search(text[:40], k=5)

        async_lag, async_s = await _measured(lambda: concurrent(texts[:calls]))
        sync_lag, sync_s = await _measured(blocking)
        drained = await aio.wait(600)
    return {
        "benchmark": "async", "store": memory.admin.kind, "calls": {"adds": calls, "searches": calls},
        "max_workers": max_workers, "switch_interval_s": sys.getswitchinterval(), "loop_lag_ms": async_lag,
        "seconds": round(async_s, 3),
        "blocking_calls_from_a_coroutine": {"loop_lag_ms": sync_lag, "seconds": round(sync_s, 3)},
        "analyses_drained": drained,
    }
