"""The engine's warm-up: its hot path run over a scratch tenant, then deleted, so that the first real calls after
a server starts run at the speed of later ones. A freshly started Neo4j has no plans for the engine's
statements, has compiled none of the code that runs them and holds none of their pages; a fresh process has no
model session. All of that is paid once here instead of by a user's first adds and searches."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from ..models import NoteInput
from .admin import Admin

WARM_UP_S = 30.0  # the default: the first round plans every statement; later ones let the server compile their code
TIER_ROUNDS = 4  # a turn through the tiers every this many rounds
SCRATCH_PREFIX = "amem-warm-up-"  # a scratch tenant's name; deleted at the end of its warm-up
_TURNS = (
    "Alice: I adopted a beagle named Max from the shelter in Portland last May.",
    "Bob: We drove to the lake on Saturday and my sister caught three trout before noon.",
    "Alice: My new job at the hospital starts in two weeks, I am nervous about the night shifts.",
    "Bob: The book club picked a novel about a lighthouse keeper in Norway for next month.",
    "Alice: Max chewed through the garden hose again, so I bought a metal one at the hardware store.",
    "Bob: I finally finished painting the kitchen yellow; it took four coats and a whole weekend.",
)


@dataclass(frozen=True)
class WarmUp:
    rounds: int
    seconds: float


class Scratch(Protocol):
    """The calls of a memory (`AgenticMemory`, the layer above) that the warm-up makes."""

    tenant: str
    admin: Admin

    def add(self, content: str, *, source: str | None = None, session: str | None = None) -> object: ...

    def add_many(self, items: Iterable[NoteInput | str]) -> object: ...

    def search(self, query: str, *, k: int = 10, hops: int = 2) -> object: ...

    def add_turn(self, user_text: str, assistant_text: str = "", *, session_id: str = "default") -> object: ...

    def context_for(self, query: str, *, session_id: str | None = None) -> object: ...


def scratch_tenant() -> str:
    return f"{SCRATCH_PREFIX}{uuid.uuid4().hex[:12]}"


def run(scratch: Scratch, seconds: float) -> WarmUp:
    """Rounds of the hot path on `scratch` (a memory of a scratch tenant, analysing offline) until `seconds`
    have passed, at least one; then the tenant is deleted, whatever happened."""
    began = time.perf_counter()
    rounds = 0
    try:
        while rounds == 0 or time.perf_counter() - began < seconds:
            _round(scratch, rounds)
            rounds += 1
    finally:
        scratch.admin.delete_tenant(scratch.tenant)
    return WarmUp(rounds=rounds, seconds=round(time.perf_counter() - began, 2))


def _round(scratch: Scratch, n: int) -> None:
    """Each kind of call the engine serves: an analysed add in a session, a bulk batch, searches with and without
    expansion; every few rounds a turn through the tiers and its context (their later turns cost more, as pages
    move on to segments, and compile little that the notes' calls do not)."""
    turn = _TURNS[n % len(_TURNS)]
    scratch.add(f"{turn} (round {n})", source=f"warm-up:{n}", session="warm-up")
    scratch.add_many([NoteInput(content=f"{t} (batch {n})", source=f"warm-up:{n}:{i}") for i, t in enumerate(_TURNS)])
    query = turn.split(": ", 1)[1][:40]
    scratch.search(query, k=10)
    scratch.search(query, k=10, hops=0)
    if n % TIER_ROUNDS == 0:
        scratch.add_turn(turn, session_id="warm-up")
        scratch.context_for(query, session_id="warm-up")
