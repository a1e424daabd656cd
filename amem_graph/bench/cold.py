"""`--cold`: a benchmark run on a Neo4j server started for it, then again on the same, now warm, server; the
first run sees what a user's first minutes see (no planned statements, no compiled code, empty caches)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..api import AgenticMemory
from ..maintenance.warmup import WARM_UP_S
from ..server import private_server
from ..settings import Settings


def cold_then_warm(settings: Settings, bench: Callable[[Settings], dict[str, Any]],
                   ratios: dict[str, Callable[[dict[str, Any]], float]], *, warm_up: float = WARM_UP_S) -> dict[str, Any]:
    """`bench` on a freshly started private server, after the engine's warm-up of `warm_up` seconds as
    `amem-graph neo4j start` runs it, then again on the same server; `ratios` name figures (read from a result)
    reported as cold over warm."""
    with tempfile.TemporaryDirectory(prefix="amem-cold-") as workdir, private_server(
        Path(workdir) / "neo4j", home=settings.home, version=settings.neo4j_version,
    ) as (_, info):
        fresh = replace(settings, store="neo4j", neo4j_uri=info.uri, neo4j_user=info.user,
                        neo4j_password=info.password, neo4j_database=None)
        done = None
        if warm_up > 0:
            with AgenticMemory(fresh) as memory:
                done = memory.warm_up(warm_up)
        cold = bench(fresh)
        warm = bench(fresh)
    return {"server": "a private Neo4j started for the run (cold), then the same server again (warm)",
            "warm_up": None if done is None else {"rounds": done.rounds, "seconds": done.seconds},
            "cold": cold, "warm": warm,
            "cold_over_warm": {name: round(read(cold) / read(warm), 3) for name, read in ratios.items()}}
