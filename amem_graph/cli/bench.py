"""`amem-graph bench ...`: benchmark commands that print JSON."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from ..api import AgenticMemory
from ..bench import background as background_bench
from ..bench import chaos as chaos_bench
from ..bench import embed as embed_bench
from ..bench import entities as entities_bench
from ..bench import ingest as ingest_bench
from ..bench import llm_cost as llm_cost_bench
from ..bench import load as load_bench
from ..bench import locomo_recall, loop_lag, timeline
from ..bench import mcp as mcp_bench
from ..bench import network as network_bench
from ..bench import readers as readers_bench
from ..bench import scale as scale_bench
from ..bench import view as view_bench
from ..bench.cold import cold_then_warm
from ..bench.private import private_memory
from ..errors import InvalidInput
from ..ingest import locomo as locomo_data
from ..maintenance.warmup import WARM_UP_S
from ..models import MAX_HOPS
from ..settings import Settings
from .common import WarmUpOption, choices, print_json, user_errors
from .notes import memory

app = typer.Typer(help="Benchmarks; each prints JSON (and writes it to --json PATH).")
StoreChoice = choices("StoreChoice", ("neo4j", "embedded", "both"))
CostMode = choices("CostMode", ("notes", "tiers"))
LLMSource = choices("LLMSource", llm_cost_bench.LLM_SOURCES)
RecallMode = choices("RecallMode", ("notes", "tiers", "both"))
StoreOption = Annotated[
    StoreChoice | None,  # type: ignore[valid-type]
    typer.Option("--store", help="both: one after the other, side by side [default: as configured]"),
]
JsonOutOption = Annotated[Path | None, typer.Option("--json", help="Also write the result here")]
ColdOption = Annotated[bool, typer.Option(
    "--cold", help="Run on a Neo4j server started for the run (after the engine's warm-up, as `amem-graph neo4j "
                   "start` runs it), then again on it warm; both side by side")]


def _budgets(value: str, option: str = "--k") -> list[int]:
    """--k (or --n) as integers: a malformed list is a bad command line (exit 2), like any other bad option."""
    try:
        budgets = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"comma-separated integers, such as 5,10,25, not {value!r}",
                                 param_hint=f"'{option}'") from None
    if not budgets or min(budgets) < 1:
        raise typer.BadParameter(f"comma-separated integers of at least 1, such as 5,10,25, not {value!r}",
                                 param_hint=f"'{option}'")
    return budgets


def _on_stores(store: StrEnum | None, bench: Callable[[AgenticMemory], dict[str, Any]]) -> dict[str, Any]:
    """`bench` on the store asked for, or on each store in turn with both results side by side."""
    if store != "both":
        with memory(store=store and store.value) as mem:
            return bench(mem)
    results = {}
    for kind in ("neo4j", "embedded"):
        with memory(store=kind) as mem:
            results[kind] = bench(mem)
    return {"stores": results}


def _on_private_stores(store: StrEnum | None, bench: Callable[[AgenticMemory], dict[str, Any]]) -> dict[str, Any]:
    """`bench` as `_on_stores` runs it, each store a database of its own (`bench.private`)."""
    settings = Settings.from_env()
    kinds = ("neo4j", "embedded") if store == "both" else (store.value if store else settings.store_kind,)
    results = {}
    for kind in kinds:
        with tempfile.TemporaryDirectory(prefix="amem-bench-") as workdir, \
                private_memory(settings, kind, Path(workdir)) as (mem, _):
            results[kind] = bench(mem)
    return results[kinds[0]] if len(kinds) == 1 else {"stores": results}


@app.command()
@user_errors
def ingest(
    n: Annotated[int, typer.Option("--n", min=1, help="Notes to ingest")] = 10_000,
    json_out: JsonOutOption = None,
    chunk: Annotated[int, typer.Option(min=1, help="Notes per alternating embed-only / ingest round")] = 1000,
    queries: Annotated[int, typer.Option(min=1, help="k-NN queries to time")] = 200,
    k: Annotated[int, typer.Option(min=1, max=1000)] = 10,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the benchmark tenant instead of deleting it")] = False,
    store: StoreOption = None,
    cold: ColdOption = False,
    warm_up: WarmUpOption = WARM_UP_S,
) -> None:
    """Bulk-ingest throughput vs embedding alone (same run), and k-NN latency without query embedding."""
    def bench(mem: AgenticMemory) -> dict[str, Any]:
        return ingest_bench.run(mem, n, chunk=chunk, queries=queries, k=k, keep=keep)

    if cold:
        if store is not None:
            raise typer.BadParameter("--cold runs on a Neo4j server of its own", param_hint="'--store'")

        def once(settings: Settings) -> dict[str, Any]:
            with AgenticMemory(settings) as mem:
                return bench(mem)

        result = cold_then_warm(Settings.from_env(), once, {
            "notes_per_s": lambda r: r["notes_per_s"], "knn_p95": lambda r: r["knn_ms"]["p95"],
            "hybrid_search_p95": lambda r: r["hybrid_search_ms"]["p95"],
        }, warm_up=warm_up)
    else:
        result = _on_stores(store, bench)
    print_json(result, also_to=json_out)


@app.command()
@user_errors
def load(
    writers: Annotated[int, typer.Option(min=0, max=64, help="Writer threads: analysed adds, turns, updates")] = 8,
    readers: Annotated[int, typer.Option(min=0, max=64, help="Reader threads: search, tier context, read-back")] = 8,
    tenants: Annotated[int, typer.Option(min=1, max=100, help="Tenants; the first gets half of all operations")] = 4,
    seconds: Annotated[float, typer.Option(min=1, max=86_400, help="How long the threads run")] = 60,
    max_ops: Annotated[int, typer.Option("--max-ops", min=1, help="Operations per thread at most")] = 10_000,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the benchmark tenants instead of deleting them")] = False,
    maintenance: Annotated[bool, typer.Option("--maintenance", 
        help="Also run retention (archiving the coldest notes) and restores of archived notes beside them")] = False,
    consolidate_to: Annotated[str | None, typer.Option(
        "--consolidate-to", metavar="MODEL",
        help="Halfway through, move the database to this embedding model (`amem-graph consolidate`); the run gets "
             "a database of its own (a private Neo4j server, a temporary embedded folder)")] = None,
    json_out: JsonOutOption = None,
    store: StoreOption = None,
) -> None:
    """Writers and readers at once, then proof: every acknowledged write read back, nothing duplicated, `check`
    sound on every tenant; throughput, p50/p95/p99 under load beside idle ones, retries and conflicts; with
    maintenance, how many notes were archived, restored and embedded again. Exits 10 when something was lost or
    broken."""
    def bench(mem: AgenticMemory) -> dict[str, Any]:
        return load_bench.run(mem, writers=writers, readers=readers, tenants=tenants, seconds=seconds,
                              max_ops=max_ops, keep=keep, maintenance=maintenance, consolidate_to=consolidate_to)

    result = _on_stores(store, bench) if consolidate_to is None else _on_private_stores(store, bench)
    print_json(result, also_to=json_out)
    runs = result["stores"].values() if "stores" in result else [result]
    if not all(r["sound"] for r in runs):
        raise typer.Exit(10)


ChaosStore = choices("ChaosStore", ("neo4j", "embedded"))


@app.command()
@user_errors
def scale(
    store: Annotated[ChaosStore, typer.Option("--store", help="neo4j: a private server of its own")],  # type: ignore[valid-type]
    n: Annotated[str, typer.Option("--n", help="Sizes to measure at, comma-separated (notes in all)")] = "10000,100000,1000000",
    tenants: Annotated[int, typer.Option(min=1, max=10_000, help="Tenants the notes are spread over")] = 1,
    queries: Annotated[int, typer.Option(min=10, help="k-NN queries per size")] = 300,
    k: Annotated[int, typer.Option(min=1, max=100)] = 10,
    heap: Annotated[str, typer.Option(help="The private server's heap")] = "4g",
    pagecache: Annotated[str, typer.Option(help="The private server's page cache")] = "4g",
    json_out: JsonOutOption = None,
) -> None:
    """The store at growing sizes with precomputed vectors: ingest rate, index online time, k-NN p50/p95 and
    recall@k against an exact scan, search with expansion, memory and disk."""
    sizes = _budgets(n, "--n")
    with tempfile.TemporaryDirectory(prefix="amem-scale-") as workdir:
        result = scale_bench.run(Settings.from_env(), store.value, sizes=sizes, tenants=tenants, queries=queries, k=k,
                                 workdir=Path(workdir), heap=heap, pagecache=pagecache)
    print_json(result, also_to=json_out)


@app.command()
@user_errors
def chaos(
    store: Annotated[ChaosStore, typer.Option("--store", help="neo4j: a private server of its own is killed")],  # type: ignore[valid-type]
    kills: Annotated[int, typer.Option(min=1, max=10_000, help="SIGKILLs, each at a random moment")] = 20,
    max_delay: Annotated[float, typer.Option(min=0.1, help="Seconds of writing before a kill, at most")] = 3.0,
    llm_faults: Annotated[bool, typer.Option(
        "--llm-faults", help="Analyse with a scripted model on loopback that hangs, resets, fails or is slow "
                             "one request in two")] = False,
    consolidate_to: Annotated[str | None, typer.Option(
        "--consolidate-to", metavar="MODEL",
        help=f"Every {chaos_bench.CONSOLIDATE_EVERY} steps, a consolidation of the database to this embedding model "
             "and back, in turn")] = None,
    queued: Annotated[bool, typer.Option(
        "--queued", help="Writes queue the model's analysis (a scripted model that takes a moment) and a worker "
                         "applies it: kills land among analyses in flight; on Neo4j the worker is a process of its "
                         "own, killed too")] = False,
    json_out: JsonOutOption = None,
) -> None:
    """SIGKILL mid-write (the embedded store's process, or a private Neo4j server), repeatedly; after each, the
    store must open with every acknowledged write, no partial batch and `check` sound; then the plan completes
    with every note once (and with --queued, the queue drains: every note analysed once). Exits 10 when something
    was lost or broken."""
    with tempfile.TemporaryDirectory(prefix="amem-chaos-") as workdir:
        result = chaos_bench.run(Settings.from_env(), store.value, kills=kills, max_delay=max_delay,
                                 llm_faults=llm_faults, workdir=Path(workdir), consolidate_to=consolidate_to,
                                 queued=queued)
    print_json(result, also_to=json_out)
    if not result["sound"]:
        raise typer.Exit(10)


McpStore = choices("McpStore", ("neo4j", "embedded"))


@app.command()
@user_errors
def mcp(
    n: Annotated[int, typer.Option("--n", min=1, help="Adds per path and round")] = 100,
    queries: Annotated[int, typer.Option(min=1, help="Searches per path and round")] = 100,
    rounds: Annotated[int, typer.Option(min=1, max=10, help="Times the three paths run, one after the other")] = 2,
    store: Annotated[McpStore | None, typer.Option("--store", help="[default: as configured]")] = None,  # type: ignore[valid-type]
    json_out: JsonOutOption = None,
) -> None:
    """Tool-call latency of add and search through `amem-graph mcp` over stdio and streamable HTTP, beside the
    same calls in process: p50/p95 and the protocol's overhead as a ratio."""
    settings = Settings.from_env()
    result = mcp_bench.run(settings if store is None else replace(settings, store=store.value), n=n,
                           queries=queries, rounds=rounds)
    print_json(result, also_to=json_out)


@app.command()
@user_errors
def embed(
    json_out: JsonOutOption = None,
    n: Annotated[int, typer.Option("--n", min=1, help="Texts embedded in batches, per round")] = 2000,
    singles: Annotated[int, typer.Option(min=1, help="Of those, texts embedded one at a time, per round")] = 300,
    rounds: Annotated[int, typer.Option(min=1, help="Alternating rounds of each backend")] = 3,
    data: Annotated[Path | None, typer.Option(help="LoCoMo JSON: its turns as the texts (else synthetic ones)")] = None,
    model: Annotated[list[str] | None, typer.Option(
        help="A model to measure; repeat for several side by side [default: AMEM_EMBEDDING_MODEL]")] = None,
    backend: Annotated[list[str] | None, typer.Option(
        help="onnx-int8, onnx or torch; repeat for several [default: each that runs here]")] = None,
) -> None:
    """The embedding backends (torch where installed, onnx, onnx-int8), or models, side by side: sentences/s, ms per
    text, and the cosine of a model's vectors on each backend to its torch vectors (else to its onnx ones)."""
    settings = Settings.from_env()
    texts = [t.content for c in locomo_data.load(data) for t in locomo_data.turns(c)] if data else None
    result = embed_bench.run(model or [settings.embedding_model], texts=texts, n=n, singles=singles, rounds=rounds,
                             batch_size=settings.embedding_batch_size, home=settings.home, backends=backend or ())
    print_json(result, also_to=json_out)


@app.command("langchain")
@user_errors
def langchain(
    n: Annotated[int, typer.Option("--n", min=1, help="Texts written through each path")] = 100,
    queries: Annotated[int, typer.Option(min=1, help="Queries read through each path")] = 50,
    json_out: JsonOutOption = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the benchmark tenants instead of deleting them")] = False,
) -> None:
    """The LangChain / LangGraph adapters against the engine's own calls, in turn: ms per call and ratios."""
    try:
        from ..bench import langchain as langchain_bench
    except ImportError as err:
        raise InvalidInput(f"{err}: pip install 'amem-graph[langchain]'") from None
    with memory() as mem:
        result = langchain_bench.run(mem, n, queries=queries, keep=keep)
    print_json(result, also_to=json_out)


@app.command("llm-cost")
@user_errors
def llm_cost(
    data: Annotated[Path, typer.Option(help="LoCoMo JSON, e.g. locomo10.json")],
    json_out: JsonOutOption = None,
    conversation: Annotated[str | None, typer.Option(help="sample_id [default: the first]")] = None,
    limit: Annotated[int | None, typer.Option("--turns", "--limit", min=1, help="Only the first N turns")] = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the benchmark tenant instead of deleting it")] = False,
    mode: Annotated[CostMode, typer.Option(  # type: ignore[valid-type]
        help="notes: add per turn; tiers: add_turn through the MemoryOS tiers")] = "notes",
    llm: Annotated[LLMSource, typer.Option(  # type: ignore[valid-type]
        help="scripted: the scripted server (tokens and overhead); configured: the AMEM_LLM_* endpoint, a real "
             "model's latency and degrade rate")] = "scripted",
    cold: ColdOption = False,
    warm_up: WarmUpOption = WARM_UP_S,
) -> None:
    """LLM calls and tokens per added note (or turn), latency without LLM time, over one conversation. With
    --cold (notes mode), every add is counted: none of the uncounted adds a warm run starts with."""
    settings = Settings.from_env()
    if cold:
        if mode != "notes":
            raise typer.BadParameter("--cold measures the notes mode", param_hint="'--mode'")
        result = cold_then_warm(settings, lambda fresh: llm_cost_bench.run(
            fresh, data, conversation=conversation, limit=limit, keep=keep, llm=llm.value, uncounted_adds=False,
        ), {"add_p50": lambda r: r["add_ms"]["p50"], "add_p95": lambda r: r["add_ms"]["p95"],
            "search_p95": lambda r: r["search_ms"]["p95"]}, warm_up=warm_up)
    else:
        bench = llm_cost_bench.run if mode == "notes" else llm_cost_bench.run_tiers
        result = bench(settings, data, conversation=conversation, limit=limit, keep=keep, llm=llm.value)
    print_json(result, also_to=json_out)


@app.command("time")
@user_errors
def time_(
    data: Annotated[Path | None, typer.Option(
        help="BEAM in LoCoMo's layout, e.g. beam.json: its update questions")] = None,
    people: Annotated[int, typer.Option(min=1, max=20, help="People in the generated history")] = 20,
    moves: Annotated[int, typer.Option(min=2, max=16, help="Moves of each, each superseding the last")] = 4,
    prefix: Annotated[str, typer.Option(help="Tenant name prefix")] = "time-",
    keep: Annotated[bool, typer.Option("--keep", help="Keep the benchmark tenants instead of deleting them")] = False,
    json_out: JsonOutOption = None,
    store: StoreOption = None,
) -> None:
    """The current fact above the stale one by default, and as of an earlier moment the fact that held then: on
    BEAM's update questions (the data's labels supersede) and a generated history; search p50/p95 plain, with
    --as-of and with --valid-at, in the same run."""
    result = _on_stores(store, lambda mem: timeline.run(mem, data, prefix=prefix, people=people, moves=moves,
                                                        keep=keep))
    print_json(result, also_to=json_out)


@app.command()
@user_errors
def view(
    notes: Annotated[int, typer.Option("--notes", min=10, help="Notes in the tenant the viewer shows")] = 10_000,
    links: Annotated[int, typer.Option(min=0, help="Links made between random notes")] = 2_000,
    changes: Annotated[int, typer.Option(min=0, help="Notes changed after the links (versions to show)")] = 100,
    repeats: Annotated[int, typer.Option(min=1, max=1000, help="Timed repeats of each request")] = 20,
    browser: Annotated[bool, typer.Option(help="Also time the page in headless Chromium (when installed)")] = True,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the benchmark tenant instead of deleting it")] = False,
    json_out: JsonOutOption = None,
    store: StoreOption = None,
) -> None:
    """The viewer on a large tenant over HTTP: the first view (the page, its assets, the summary and the overview),
    the page interactive in Chromium, a search with its explanation, a neighbourhood, a note, an as-of overview."""
    def bench(kind: str | None) -> dict[str, Any]:
        with memory(view_bench.tenant(), store=kind) as mem:
            return view_bench.run(mem, notes, links=links, changes=changes, repeats=repeats, browser=browser, keep=keep)

    if store == "both":
        result: dict[str, Any] = {"stores": {kind: bench(kind) for kind in ("neo4j", "embedded")}}
    else:
        result = bench(store and store.value)
    print_json(result, also_to=json_out)


@app.command()
@user_errors
def locomo(
    data: Annotated[list[Path], typer.Option(
        help="LoCoMo-layout JSON, e.g. locomo10.json; repeat for several sets, judged side "
             "by side in one summary")],
    json_out: JsonOutOption = None,
    conversations: Annotated[
        str | None, typer.Option(help="Comma-separated sample_ids [default: all]")
    ] = None,
    k: Annotated[str, typer.Option("--k", help="Comma-separated budgets, in turns")] = "5,10,25",
    hops: Annotated[int, typer.Option(min=0, max=MAX_HOPS)] = 2,
    ablations: Annotated[bool, typer.Option(help="Also measure the search with each ingredient changed")] = True,
    prefix: Annotated[str, typer.Option(help="Tenant name prefix; tenants that hold a conversation are reused")]
    = "locomo-",
    questions: Annotated[int | None, typer.Option(min=1, help="Only the first N questions per conversation")] = None,
    turns: Annotated[
        int | None, typer.Option(min=1, help="Only the first N turns per conversation (and questions about them)")
    ] = None,
    qa: Annotated[bool, typer.Option("--qa", help="Also answer each question with the configured LLM: F1 and BLEU-1")]
    = False,
    mode: Annotated[
        RecallMode,  # type: ignore[valid-type]
        typer.Option(help="notes: turns as notes, search; tiers: turns as pages, context_for; both: side by side")
    ] = "notes",
    store: StoreOption = None,
) -> None:
    """Evidence recall@k and hit@k per category on LoCoMo (or data in its layout: REALTALK, BEAM), beside flat
    dense / BM25 / hybrid over the same turns in the same run; one tenant per conversation, ingested through the
    analysed write path (notes) or as dialogue pages through the MemoryOS tiers (--mode tiers). Several --data
    files: each set's result, and a summary table of all of them."""
    budgets = _budgets(k)
    names = [c.strip() for c in conversations.split(",") if c.strip()] if conversations else None
    result = _on_stores(store, lambda mem: locomo_recall.run_sets(
        mem, data, conversations=names, ks=budgets, hops=hops, prefix=prefix, ablations=ablations,
        limit=questions, qa=qa, turns=turns, mode=mode.value,
    ))
    print_json(result, also_to=json_out)


@app.command()
@user_errors
def network(
    data: Annotated[list[Path], typer.Option(help="LoCoMo-layout JSON; repeat for several sets")],
    json_out: JsonOutOption = None,
    conversations: Annotated[str | None, typer.Option(help="Comma-separated sample_ids [default: all]")] = None,
    turns: Annotated[int | None, typer.Option(min=1, help="Only the first N turns per conversation")] = None,
    prefix: Annotated[str, typer.Option(help="Tenant name prefix; tenants that hold a conversation are reused "
                                             "(the same as bench locomo's)")] = "locomo-",
    store: StoreOption = None,
) -> None:
    """What the knowledge network of each conversation looks like: versions a note and their reasons, entities per
    100 turns and the share of mentions that go to a common word, near-duplicate tags, and how much likelier two
    turns cited as evidence of one question (different sessions) are joined by a link, two links or an entity
    than two random turns. Ingests as bench locomo does (reusing its tenants)."""
    names = [c.strip() for c in conversations.split(",") if c.strip()] if conversations else None
    result = _on_stores(store, lambda mem: network_bench.run(mem, data, conversations=names, turns=turns,
                                                             prefix=prefix))
    print_json(result, also_to=json_out)


@app.command()
@user_errors
def background(
    data: Annotated[Path | None, typer.Option(help="LoCoMo-layout JSON [default: generated chat turns]")] = None,
    json_out: JsonOutOption = None,
    conversation: Annotated[str | None, typer.Option(help="sample_id [default: the first]")] = None,
    turns: Annotated[int | None, typer.Option(min=20, help="Only the first N turns")] = None,
    llm_latency: Annotated[float, typer.Option(
        "--llm-latency", min=0.0, max=60.0, help="Seconds the scripted model takes to answer each analysis")] = 1.5,
    concurrency: Annotated[int, typer.Option(min=1, max=256, help="Analyses in flight (AMEM_LLM_CONCURRENCY)")] = 8,
    adds: Annotated[int, typer.Option(min=1, max=10_000, help="Queued adds to time")] = 50,
    recall: Annotated[bool, typer.Option(
        "--recall", help="Instead: recall@10 on every conversation of --data, added inline and with the analysis "
                         "queued, with a model that answers at once")] = False,
    store: StoreOption = None,
) -> None:
    """Writes that do not wait for the model: add p50/p95 with the analysis queued (inline beside it) and a search
    for each note right after its add; an analysed import of one conversation at --concurrency calls in flight
    (notes a second, calls a note); how long another tenant's note waits behind it; and what the background
    changes in the network against the inline path. A scripted model on loopback answers after --llm-latency."""
    settings = Settings.from_env()
    kinds = ("neo4j", "embedded") if store == "both" else (store.value if store else settings.store_kind,)
    if recall and data is None:
        raise InvalidInput("--recall measures recall on a LoCoMo-layout file: give it with --data")
    results = {kind: background_bench.recall(replace(settings, store=kind), data, concurrency=concurrency)
               if recall and data is not None else
               background_bench.run(replace(settings, store=kind), data, latency_s=llm_latency,
                                    concurrency=concurrency, adds=adds, conversation=conversation, limit=turns)
               for kind in kinds}
    print_json(results[kinds[0]] if len(kinds) == 1 else {"stores": results}, also_to=json_out)


@app.command(name="async")
@user_errors
def async_calls(
    calls: Annotated[int, typer.Option(min=1, max=10_000, help="Adds, and as many searches, run at once")] = 50,
    llm_latency: Annotated[float, typer.Option(
        "--llm-latency", min=0.0, max=60.0, help="Seconds the scripted model takes to answer each analysis")] = 1.5,
    max_workers: Annotated[int, typer.Option(min=1, max=256, help="AsyncAgenticMemory's threads")] = 8,
    json_out: JsonOutOption = None,
    store: StoreOption = None,
) -> None:
    """The event loop's lag (how late a task that sleeps 1 ms wakes) while --calls adds and as many searches run
    at once through AsyncAgenticMemory, beside the same calls made synchronously from a coroutine."""
    settings = Settings.from_env()
    kinds = ("neo4j", "embedded") if store == "both" else (store.value if store else settings.store_kind,)
    results = {kind: loop_lag.run(replace(settings, store=kind), calls=calls, latency_s=llm_latency,
                                  max_workers=max_workers) for kind in kinds}
    print_json(results[kinds[0]] if len(kinds) == 1 else {"stores": results}, also_to=json_out)


@app.command()
@user_errors
def readers(
    notes: Annotated[int, typer.Option(min=10, max=1_000_000, help="Notes the writer adds")] = 1_000,
    kills: Annotated[int, typer.Option(min=0, max=1_000, help="SIGKILLs of the writer, at random moments")] = 20,
    batch: Annotated[int, typer.Option(min=1, max=1_000, help="Notes a write adds (one transaction)")] = 5,
    json_out: JsonOutOption = None,
) -> None:
    """One process writes an embedded store (in a temporary folder) while this one reads it through the viewer and
    searches, and `amem-graph search` runs beside them: how soon a note is visible, whether a read failed or saw part
    of a write, whether anything acknowledged was lost, with the writer killed --kills times."""
    print_json(readers_bench.run(notes=notes, kills=kills, batch=batch), also_to=json_out)


@app.command()
@user_errors
def entities(
    data: Annotated[list[Path], typer.Option(help="The LoCoMo-layout JSON of each set the gold set names")],
    gold: Annotated[Path, typer.Option(help="Hand-labelled mentions, one turn a line")]
    = Path("tests/data/entities/gold.jsonl"),
    extractor: Annotated[list[str] | None, typer.Option(
        help="rules or spacy; repeat for both [default: both, spacy where it is installed]")] = None,
    json_out: JsonOutOption = None,
) -> None:
    """Precision and recall of the entity extractors against the gold set, per kind, for named things and topics,
    per set and overall; a topic counts where it recurs as it must to be shown."""
    chosen = extractor or ["rules", *(["spacy"] if entities_bench.spacy_installed() else [])]
    print_json(entities_bench.run(gold, data, chosen, assistant=Settings.from_env().tiers.assistant), also_to=json_out)
