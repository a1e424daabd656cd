"""`amem-graph worker`: a process that applies the analyses writes queued (docs/write-path.md)."""

from __future__ import annotations

import signal
from types import FrameType
from typing import Annotated

import typer

from .common import console, print_json
from .notes import JsonOption, memory


def worker(
    until_empty: Annotated[bool, typer.Option(
        "--until-empty", help="Stop once no note of any tenant waits for its analysis")] = False,
    as_json: JsonOption = False,
) -> None:
    """Apply the model's analysis to the notes writes queued, every tenant's, AMEM_LLM_CONCURRENCY calls in flight,
    until stopped (Ctrl-C or SIGTERM: the analyses in flight finish or are handed back). Several workers may share
    one Neo4j database: each note is analysed once."""
    signal.signal(signal.SIGTERM, _interrupt)
    with memory() as mem:  # closing it lets the analyses in flight finish, then hands back the rest
        try:
            done = mem.work(until_empty=until_empty)
        except KeyboardInterrupt:
            done = {}
    if as_json:
        print_json(done)
    elif done:
        console.print(", ".join(f"{count} {what}" for what, count in done.items()))


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM stops the worker as Ctrl-C does."""
    raise KeyboardInterrupt
