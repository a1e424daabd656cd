"""`bench load`: writers and readers at once on a few tenants (one of them hot), then proof that nothing was
lost, duplicated or left unsound: every acknowledged write is read back, and `check` passes on every tenant.

Writers add analysed notes (which evolve their neighbours), dialogue turns and updates of their own notes;
readers search, read tier context and read back notes other threads acknowledged. With maintenance, two more
threads run beside them: retention runs that archive the coldest notes of a tenant (a policy keeping `KEEP` of
them), and restores of notes archived; and, with a model to consolidate to, a consolidation of the database to it
halfway through. Threads of one process share one engine, as a service does (the embedded store serves one
process): on Neo4j the consolidation runs beside them (a memory of the old model writes nothing meanwhile, a typed
refusal, and searches by keyword), then the threads move to a memory of the new model; the embedded store is
closed for it (the threads wait), then opened with the new model."""

from __future__ import annotations

import logging
import random
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..api import AgenticMemory
from ..embedding import Embedder, composite_text
from ..errors import EvolutionConflict, SchemaMismatch
from ..maintenance import admin
from ..maintenance.invariants import check
from ..models import RetentionPolicy
from .texts import sentences

IDLE_ROUNDS = 50  # of each operation, one thread, before the load: the idle latencies beside the loaded ones
HOT_SHARE = 0.5  # of operations that go to the first tenant
KEEP = 0.8  # with maintenance: a retention run keeps this share of the tenant's acknowledged notes searchable
RESTORED = 5  # with maintenance: notes a restore brings back at most
PAUSE_S = 0.5  # with maintenance: between one maintenance thread's runs


@dataclass
class _Ledger:
    """What the threads were told succeeded, and how long each call took."""

    notes: dict[str, tuple[str, str]] = field(default_factory=dict)  # note id → (tenant, content)
    pages: dict[str, str] = field(default_factory=dict)  # page id → tenant
    updates: Counter[str] = field(default_factory=Counter)  # note id → acknowledged updates
    archived: dict[str, str] = field(default_factory=dict)  # note id → tenant: archived by a retention run, not restored
    maintenance: Counter[str] = field(default_factory=Counter)  # runs and the notes they archived or restored
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[str] = field(default_factory=Counter)  # "operation: ErrorType" → count
    conflicts: int = 0
    mismatched_reads: int = 0
    moving: bool = False  # a consolidation is under way, or over and the threads not yet on the new model
    refused: Counter[str] = field(default_factory=Counter)  # operation → writes refused while the model moved
    lock: threading.Lock = field(default_factory=threading.Lock)

    def timed(self, operation: str, call: Callable[[], Any]) -> Any:
        began = time.perf_counter()
        try:
            result = call()
        except EvolutionConflict:  # an update that lost to concurrent writers: not acknowledged, so not owed
            with self.lock:
                self.conflicts += 1
            return None
        except SchemaMismatch as err:
            with self.lock:
                if self.moving:  # the refusal the engine owes a memory of the old model: nothing was written
                    self.refused[operation] += 1
                else:
                    self.errors[f"{operation}: {type(err).__name__}"] += 1
            return None
        except Exception as err:  # every other failure is counted and reported, never hidden
            with self.lock:
                self.errors[f"{operation}: {type(err).__name__}"] += 1
            return None
        with self.lock:
            self.latency[operation].append((time.perf_counter() - began) * 1000)
        return result


class _Engine:
    """The memory the threads use, swapped for one of the new model when a consolidation ends. Each operation
    holds the gate shared; closing the embedded store for a consolidation holds it alone."""

    def __init__(self, memory: AgenticMemory) -> None:
        self.memory = memory
        self.first_model = memory.embedder.model_name
        self.retired: list[AgenticMemory] = []  # of the old model, closed once the threads are done
        self._cond = threading.Condition()
        self._users = 0
        self._shut = False

    @contextmanager
    def use(self) -> Iterator[AgenticMemory]:
        with self._cond:
            self._cond.wait_for(lambda: not self._shut)
            self._users += 1
            memory = self.memory
        try:
            yield memory
        finally:
            with self._cond:
                self._users -= 1
                self._cond.notify_all()

    @contextmanager
    def alone(self) -> Iterator[None]:
        with self._cond:
            self._shut = True
            self._cond.wait_for(lambda: self._users == 0)
        try:
            yield
        finally:
            with self._cond:
                self._shut = False
                self._cond.notify_all()


class _Events(logging.Handler):
    """Counts the engine's retry and conflict events, and the driver's own retries, during the run."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.counts: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if record.name.startswith("neo4j") and "will be retried" in message:
            self.counts["driver_retries"] += 1
        for name in ("store_retry", "evolution_conflict"):
            if f'"event": "{name}"' in message:
                self.counts[name] += 1


def run(memory: AgenticMemory, *, writers: int, readers: int, tenants: int, seconds: float, max_ops: int,
        seed: int = 7, keep: bool = False, maintenance: bool = False, consolidate_to: str | None = None) -> dict[str, Any]:
    """The load on `memory`'s database; with `consolidate_to` (a model), the database is moved to that model
    halfway through: give it a database of its own."""
    run_id = uuid.uuid4().hex[:8]
    names = [f"load-{run_id}-{i}" for i in range(tenants)]
    texts = iter(sentences(max_ops * (writers + 1) + 4 * IDLE_ROUNDS, seed))
    text_lock = threading.Lock()

    def next_text() -> str:
        with text_lock:
            return next(texts)

    idle = _Ledger()
    ledger = _Ledger()
    events = _Events()
    engine = _Engine(memory)
    loggers = [logging.getLogger("amem_graph"), logging.getLogger("neo4j")]
    levels = [lg.level for lg in loggers]
    moved: dict[str, Any] | None = None
    try:
        for i in range(IDLE_ROUNDS):  # one thread: the latencies without contention
            _write(memory, idle, random.Random(seed + i), names, next_text, writer=-1, turn=i)
            _read(memory, idle, random.Random(seed + i), names)
        for lg in loggers:
            lg.addHandler(events)
            lg.setLevel(logging.INFO)
        began = time.monotonic()
        deadline = began + seconds
        threads = [
            threading.Thread(target=_writer, args=(engine, ledger, seed + 100 + w, names, next_text, w, deadline, max_ops),
                             name=f"load-writer-{w}")
            for w in range(writers)
        ] + [
            threading.Thread(target=_reader, args=(engine, ledger, seed + 200 + r, names, deadline, max_ops),
                             name=f"load-reader-{r}")
            for r in range(readers)
        ] + ([
            threading.Thread(target=_retention, args=(engine, ledger, idle, seed + 300, names, deadline),
                             name="load-retention"),
            threading.Thread(target=_restorer, args=(engine, ledger, seed + 301, names, deadline), name="load-restore"),
        ] if maintenance else [])
        moving: list[dict[str, Any]] = []
        if consolidate_to is not None:
            threads.append(threading.Thread(target=_consolidation, name="load-consolidate",
                                            args=(engine, ledger, consolidate_to, began + seconds / 2, moving)))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - began
        for lg, level in zip(loggers, levels, strict=True):
            lg.removeHandler(events)
            lg.setLevel(level)
        memory = engine.memory
        moved = moving[0] if moving else ({"error": "the consolidation did not end"} if consolidate_to else None)
        verdict = _verify(memory, names, [idle, ledger], engine.first_model if consolidate_to else None)
    finally:
        if not keep:
            for name in names:
                engine.memory.admin.delete_tenant(name)
        for old in engine.retired:
            old.close()
    result = {
        "benchmark": "load",
        "store": memory.admin.kind,
        "writers": writers, "readers": readers, "tenants": tenants, "hot_share": HOT_SHARE,
        "seconds": round(elapsed, 1), "max_ops_per_thread": max_ops,
        "embedding_backend": memory.embedder.backend,
        "operations": {op: len(v) for op, v in sorted(ledger.latency.items())},
        "ops_per_s": round(sum(len(v) for v in ledger.latency.values()) / elapsed, 2),
        "latency_ms": {op: _percentiles(v) for op, v in sorted(ledger.latency.items())},
        "idle_latency_ms": {op: _percentiles(v) for op, v in sorted(idle.latency.items())},
        "errors": dict(ledger.errors + idle.errors),
        "update_conflicts": ledger.conflicts,
        "maintenance": _maintenance_counts(ledger, maintenance, consolidate_to),
        "consolidation": None if moved is None else {**moved, "refused_writes": dict(sorted(ledger.refused.items()))},
        "retries": dict(events.counts),
        **verdict,
        "tenants_kept": names if keep else None,
    }
    if moved is not None and "error" in moved:
        result["sound"] = False
    return result


def _percentiles(samples: list[float]) -> dict[str, float]:
    data = np.asarray(samples)
    return {f"p{q}": round(float(np.percentile(data, q)), 2) for q in (50, 95, 99)} | {"n": int(data.size)}


def _tenant(rng: random.Random, names: list[str]) -> str:
    return names[0] if rng.random() < HOT_SHARE or len(names) == 1 else rng.choice(names[1:])


def _write(memory: AgenticMemory, ledger: _Ledger, rng: random.Random, names: list[str], next_text: Callable[[], str],
           *, writer: int, turn: int) -> None:
    tenant = _tenant(rng, names)
    roll = rng.random()
    if roll < 0.6:
        text = next_text()
        session = f"w{writer}-{tenant}" if rng.random() < 0.5 else None
        note = ledger.timed("add", lambda: memory.add(text, tenant=tenant, session=session))
        if note is not None:
            with ledger.lock:
                ledger.notes[note.id] = (tenant, note.content)
    elif roll < 0.85:
        text = next_text()
        page = ledger.timed("add_turn", lambda: memory.add_turn(text, "I see.", tenant=tenant, session_id=f"w{writer}"))
        if page is not None:
            with ledger.lock:
                ledger.pages[page.id] = tenant
    else:
        with ledger.lock:
            mine = [i for i, (t, _) in ledger.notes.items() if t == tenant]
        if not mine:
            return
        note_id = rng.choice(mine)
        updated = ledger.timed("update", lambda: memory.update(note_id, tenant=tenant, tags=[f"t{turn}"],
                                                              reason="load test"))
        if updated is not None:
            with ledger.lock:
                ledger.updates[note_id] += 1


def _read(memory: AgenticMemory, ledger: _Ledger, rng: random.Random, names: list[str]) -> None:
    tenant = _tenant(rng, names)
    query = rng.choice(["Who went hiking?", "What did Alice bake?", "pottery classes", "Where is the concert?",
                        "Who adopted a puppy last weekend?", "the beach with the kids"])
    roll = rng.random()
    if roll < 0.5:
        ledger.timed("search", lambda: memory.search(query, k=10, tenant=tenant))
    elif roll < 0.75:
        ledger.timed("context_for", lambda: memory.context_for(query, tenant=tenant))
    else:
        with ledger.lock:
            known = list(ledger.notes.items())
        if not known:
            return
        note_id, (owner, content) = rng.choice(known)
        note = ledger.timed("get", lambda: memory.get(note_id, tenant=owner))
        if note is not None and note.content != content:
            with ledger.lock:
                ledger.mismatched_reads += 1


def _writer(engine: _Engine, ledger: _Ledger, seed: int, names: list[str], next_text: Callable[[], str],
            writer: int, deadline: float, max_ops: int) -> None:
    rng = random.Random(seed)
    for turn in range(max_ops):
        if time.monotonic() >= deadline:
            return
        with engine.use() as memory:
            _write(memory, ledger, rng, names, next_text, writer=writer, turn=turn)


def _reader(engine: _Engine, ledger: _Ledger, seed: int, names: list[str], deadline: float, max_ops: int) -> None:
    rng = random.Random(seed)
    for _ in range(max_ops):
        if time.monotonic() >= deadline:
            return
        with engine.use() as memory:
            _read(memory, ledger, rng, names)


def _consolidation(engine: _Engine, ledger: _Ledger, to: str, at: float, moved: list[dict[str, Any]]) -> None:
    """At `at`, the database moved to the model `to`; then the threads go on with a memory of that model. The
    embedded store serves one process: the threads wait while it is closed for the move."""
    time.sleep(max(0.0, at - time.monotonic()))
    try:
        _move(engine, ledger, to, moved)
    except Exception as err:  # the run is unsound: say why
        moved.append({"error": f"{type(err).__name__}: {err}"})


def _move(engine: _Engine, ledger: _Ledger, to: str, moved: list[dict[str, Any]]) -> None:
    old = engine.memory
    settings = replace(old.settings, embedding_model=to)
    embedder = Embedder.of(settings)
    embedder.embed(["warm"])  # the model loaded before the clock starts
    began = time.monotonic()
    with ledger.lock:
        ledger.moving = True
    if old.admin.kind == "embedded":
        with engine.alone():
            waited = time.monotonic()
            old.close()
            counts = admin.consolidate(settings, embedder)
            engine.memory = AgenticMemory(settings, tenant=old.tenant, embedder=embedder)
            closed_s = time.monotonic() - waited
    else:
        counts = admin.consolidate(settings, embedder)
        fresh = AgenticMemory(settings, tenant=old.tenant, embedder=embedder)
        with engine.alone():  # no wait for the database: only for the operations in flight, to swap memories
            engine.retired.append(old)
            engine.memory = fresh
        closed_s = 0.0
    with ledger.lock:
        ledger.moving = False
        ledger.maintenance["migrated"] += sum(counts.values())
    moved.append({"to": embedder.model_name, "embedded_again": counts, "seconds": round(time.monotonic() - began, 1),
                  "threads_waited_s": round(closed_s, 1)})


def _maintenance_counts(ledger: _Ledger, maintenance: bool, consolidate_to: str | None) -> dict[str, int] | None:
    """Every count of the maintenance asked for, zero included: a run that archived nothing says so."""
    names = (["archived", "restored", "restores", "retention_runs"] if maintenance else []) + (
        ["migrated"] if consolidate_to else [])
    return {name: ledger.maintenance[name] for name in names} or None


def _retention(engine: _Engine, ledger: _Ledger, before: _Ledger, seed: int, names: list[str], deadline: float
               ) -> None:
    """Retention runs, a tenant at a time, each archiving the coldest notes past `KEEP` of those acknowledged
    (the notes written `before` the load count: a short run archives from its first round)."""
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        tenant = _tenant(rng, names)
        with ledger.lock:
            acknowledged = sum(1 for owner, _ in [*before.notes.values(), *ledger.notes.values()] if owner == tenant)
        if acknowledged >= 10:
            policy = RetentionPolicy(max_notes=int(acknowledged * KEEP))
            with engine.use() as memory:
                archived = ledger.timed("retention_run", lambda p=policy, t=tenant, m=memory: m.retention.run(p, tenant=t))
            if archived is not None:
                with ledger.lock:
                    ledger.maintenance["retention_runs"] += 1
                    ledger.maintenance["archived"] += len(archived)
                    ledger.archived.update({a.note_id: tenant for a in archived})
        time.sleep(PAUSE_S)


def _restorer(engine: _Engine, ledger: _Ledger, seed: int, names: list[str], deadline: float) -> None:
    """Restores of notes the retention runs archived, a few at a time."""
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        tenant = _tenant(rng, names)
        with ledger.lock:
            chosen = [i for i, owner in ledger.archived.items() if owner == tenant][:RESTORED]
            for note_id in chosen:
                del ledger.archived[note_id]
        if chosen:
            with engine.use() as memory:
                restored = ledger.timed("restore", lambda ids=chosen, t=tenant, m=memory: m.retention.restore(ids, tenant=t))
            if restored is not None:
                with ledger.lock:
                    ledger.maintenance["restores"] += 1
                    ledger.maintenance["restored"] += len(restored)
        time.sleep(PAUSE_S)


def _verify(memory: AgenticMemory, names: list[str], ledgers: list[_Ledger], moved_from: str | None = None
            ) -> dict[str, Any]:
    """Every acknowledged note and page is there (notes with their content and at least their updates'
    versions), no note is there twice, and every tenant passes `check`. After a move from the model
    `moved_from`, no note's vector is that model's."""
    notes: dict[str, tuple[str, str]] = {}
    pages: dict[str, str] = {}
    updates: Counter[str] = Counter()
    for ledger in ledgers:
        notes.update(ledger.notes)
        pages.update(ledger.pages)
        updates.update(ledger.updates)
    lost: list[str] = []
    wrong_content = under_versioned = duplicated = 0
    violations: dict[str, dict[str, int]] = {}
    held_notes = held_pages = archived_at_end = 0
    stale = (_Stale(memory.embedder, Embedder.of(replace(memory.settings, embedding_model=moved_from)))
             if moved_from else None)
    for name in names:
        header, records = memory.admin.export(name)
        records = list(records)
        report = check(name, header["dimension"], records)
        if not report.sound:
            violations[name] = report.counts
        stored = {r["props"].get("id"): r["props"] for r in records if r["kind"] == "node" and "Note" in r["labels"]}
        stored_pages = {r["props"].get("id") for r in records if r["kind"] == "node" and "Page" in r["labels"]}
        held_notes += len(stored)
        if stale is not None:
            stale.count(stored.values())
        archived_at_end += sum(1 for props in stored.values() if props.get("archived_at") is not None)
        held_pages += len(stored_pages)
        contents = Counter(props.get("content") for props in stored.values())
        duplicated += sum(n - 1 for n in contents.values() if n > 1)
        for note_id, (tenant, content) in notes.items():
            if tenant != name:
                continue
            props = stored.get(note_id)
            if props is None:
                lost.append(note_id)
            elif props.get("content") != content:
                wrong_content += 1
            elif props.get("version", 0) < 1 + updates[note_id]:
                under_versioned += 1
        lost += [page_id for page_id, tenant in pages.items() if tenant == name and page_id not in stored_pages]
    return {
        "acknowledged": {"notes": len(notes), "pages": len(pages), "updates": sum(updates.values())},
        "held": {"notes": held_notes, "pages": held_pages}, "archived_at_end": archived_at_end,
        "lost": len(lost), "lost_ids": lost[:20], "duplicated": duplicated, "wrong_content": wrong_content,
        "under_versioned": under_versioned,
        "mismatched_reads": sum(ledger.mismatched_reads for ledger in ledgers),
        "invariant_violations": violations,
        "old_model_vectors": None if stale is None else stale.found,
        "sound": not lost and not duplicated and not wrong_content and not under_versioned and not violations
        and not (stale and stale.found),
    }


class _Stale:
    """Notes whose vector is the old model's: nearer its embedding of the note than the new model's (vectors of
    two models share no space, so a note's own model is far the nearer)."""

    def __init__(self, new: Embedder, old: Embedder) -> None:
        self.new, self.old = new, old
        self.found = 0

    def count(self, notes: Any) -> None:
        notes = [n for n in notes if n.get("embedding") is not None]
        for start in range(0, len(notes), 256):
            batch = notes[start: start + 256]
            texts = [composite_text(n["content"], n.get("context") or "", n.get("keywords") or (), n.get("tags") or ())
                     for n in batch]
            stored = np.asarray([n["embedding"] for n in batch], dtype=np.float32)
            nearer_old = (stored * self.old.embed(texts)).sum(axis=1) > (stored * self.new.embed(texts)).sum(axis=1)
            self.found += int(nearer_old.sum())
