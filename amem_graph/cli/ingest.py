"""`amem-graph ingest`: JSON Lines of notes or dialogue turns, or a LoCoMo conversation, with a progress bar
(rate, ETA); running it again resumes an interrupted ingest."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .. import ingest as reader
from ..errors import InvalidInput
from .common import choices, console, print_json, progress
from .notes import JsonOption, TenantOption, memory

FORMATS = ("auto", "notes", "turns", "locomo")
Format = choices("Format", FORMATS)


def ingest(
    path: Annotated[Path, typer.Argument(help="A .jsonl of notes or of turns, or a LoCoMo .json")],
    tenant: TenantOption = None,
    format: Annotated[Format, typer.Option(help="auto: by extension and first line")] = "auto",  # type: ignore[valid-type]
    conversation: Annotated[str | None, typer.Option(help="LoCoMo: the sample_id (default: the first)")] = None,
    bulk: Annotated[bool, typer.Option("--bulk", help="Notes without analysis (add_many, batched); `reanalyze` later")] = False,
    analyse: Annotated[bool, typer.Option(
        "--analyse", help="Notes stored in bulk, then analysed by the LLM with AMEM_LLM_CONCURRENCY calls in flight "
                          "(each as an add would be); the ingest returns when the queue is empty")] = False,
    tiers: Annotated[bool, typer.Option(
        "--tiers", help="Notes said one after another (a LoCoMo conversation, notes with sessions) go through the "
                        "dialogue tiers instead, two to a turn: pages, segments, persona, and notes from the hot "
                        "segments")] = False,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N records")] = None,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", 
        help="Leave out a record that cannot be stored (said on stderr, counted in the report) and add the rest; "
             "without it, one stops the ingest before anything is added")] = False,
    as_json: JsonOption = False,
) -> None:
    """Add every record of a file: notes through the analysed write path (or --bulk), turns through the
    MemoryOS tiers. Repeats are skipped, so running it again after an interruption resumes it. Every record is
    checked before any is added."""
    kind = reader.detect(path) if format == "auto" else format.value
    began = time.perf_counter()
    invalid: list[str] = []

    def left_out(_: int, err: InvalidInput) -> None:
        invalid.append(str(err))
        Console(stderr=True).print(f"skipped {err}", markup=False, highlight=False)

    on_invalid = left_out if skip_invalid else None
    if tiers and (bulk or analyse):
        raise InvalidInput("--tiers sends the records through the dialogue tiers: it takes neither --bulk nor --analyse")
    with memory(tenant) as mem:
        if kind == "turns" or tiers:
            if kind == "turns":
                every = reader.turns(path, mem.settings.max_content_chars, on_invalid=on_invalid)[:limit]
            else:
                every = reader.exchanges(reader.notes(path, mem.settings.max_content_chars, conversation=conversation,
                                                      on_invalid=on_invalid)[:limit])
            todo = reader.pending_turns(every, mem.tiers.session_page_counts())
            with progress(len(todo), "turns") as advance:
                for turn in todo:
                    mem.add_turn(turn.user, turn.assistant, session_id=turn.session_id, at=turn.at)
                    advance()
        else:
            every = reader.notes(path, mem.settings.max_content_chars, conversation=conversation,
                                 on_invalid=on_invalid)[:limit]
            held = mem.existing(every)
            todo = [note for i, note in enumerate(every) if i not in held]
            with progress(len(todo), "notes") as advance:
                if bulk or analyse:
                    mem.add_many(todo, on_batch=advance, analyse=analyse)
                else:
                    for note in todo:
                        mem.add(note.content, source=note.source, keywords=note.keywords, tags=note.tags,
                                context=note.context, category=note.category, importance=note.importance,
                                event_time=note.event_time, id=note.id, session=note.session, speaker=note.speaker,
                                background=False)
                        advance()
            if analyse:
                with progress(mem.pending(), "analyses") as advance:
                    mem.work(until_empty=True, on_done=advance)
    seconds = time.perf_counter() - began
    report = {"format": kind, "tiers": tiers or kind == "turns", "records": len(every), "added": len(todo), "skipped": len(every) - len(todo),
              "invalid": invalid, "seconds": round(seconds, 2),
              "per_s": round(len(todo) / seconds, 1) if seconds else None}
    if as_json:
        print_json(report)
    else:
        left = f", {len(invalid)} invalid left out" if invalid else ""
        what = f"{kind} records" if kind == "turns" or not tiers else f"turns of {kind} records through the tiers"
        console.print(f"Added {report['added']} {what} ({report['skipped']} held already{left}) in "
                      f"{report['seconds']} s.")
