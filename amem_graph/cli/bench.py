"""`amem-graph bench ...`: benchmark commands that print JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..bench import ingest as ingest_bench
from ..bench import llm_cost as llm_cost_bench
from ..settings import Settings
from .common import print_json, user_errors
from .notes import memory

app = typer.Typer(help="Benchmarks; each prints JSON (and writes it to --json PATH).")


@app.command()
@user_errors
def ingest(
    n: Annotated[int, typer.Option("--n", min=1, help="Notes to ingest")] = 10_000,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the result here")] = None,
    chunk: Annotated[int, typer.Option(min=1, help="Notes per alternating embed-only / ingest round")] = 1000,
    queries: Annotated[int, typer.Option(min=1, help="k-NN queries to time")] = 200,
    k: Annotated[int, typer.Option(min=1, max=1000)] = 10,
    keep: Annotated[bool, typer.Option(help="Keep the benchmark tenant instead of deleting it")] = False,
) -> None:
    """Bulk-ingest throughput vs embedding alone (same run), and k-NN latency without query embedding."""
    with memory() as mem:
        result = ingest_bench.run(mem, n, chunk=chunk, queries=queries, k=k, keep=keep)
    if json_out:
        json_out.write_text(json.dumps(result, indent=2) + "\n")
    print_json(result)


@app.command("llm-cost")
@user_errors
def llm_cost(
    data: Annotated[Path, typer.Option(help="LoCoMo JSON, e.g. ../shared/data/locomo/locomo-dev.json")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the result here")] = None,
    conversation: Annotated[str | None, typer.Option(help="sample_id [default: the first]")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N turns")] = None,
    keep: Annotated[bool, typer.Option(help="Keep the benchmark tenant instead of deleting it")] = False,
) -> None:
    """LLM calls and tokens per added note, add latency without LLM time (scripted LLM server, one conversation)."""
    result = llm_cost_bench.run(Settings.from_env(), data, conversation=conversation, limit=limit, keep=keep)
    if json_out:
        json_out.write_text(json.dumps(result, indent=2) + "\n")
    print_json(result)
