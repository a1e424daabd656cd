"""`bench chaos`: SIGKILL in the middle of writes, again and again, and proof that nothing acknowledged was lost
and nothing partial was left.

A child process writes a fixed plan (bulk batches, analysed adds that evolve their neighbours, dialogue turns
that promote segments, retention runs that archive half the notes one per transaction, restores of archived
notes, and on the embedded store, closes that write a snapshot; with a model to consolidate to, a consolidation of
the database every `CONSOLIDATE_EVERY` steps, to that model and back in turn), printing each step once it returned. At a
random moment the parent kills the embedded store's process, or the Neo4j server (then the child); restarts
what it killed; and checks: the store opens, every acknowledged note and page is there, each bulk batch is whole
or absent, and `check` passes. After the last kill the plan runs once more to the end (a whole cycle of its
steps at least): every step must return, with every planned note exactly once. With `llm_faults` the child
analyses through a scripted model on loopback that hangs, resets, fails or is slow one request in two: the same
must hold, and the notes say how many analyses degraded to the heuristic. With `queued`, writes queue the model's
analysis (adds in the background, bulk steps with `analyse`) and a worker applies it: the child's own thread on the
embedded store; on Neo4j an `amem-graph worker` process, killed with the rest each round. After the last run the
queue must drain, every note analysed once (`check`'s analysis rule) and none left pending."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..api import AgenticMemory
from ..embedding import Embedder, canonical_model
from ..errors import AmemError, SchemaMismatch
from ..maintenance import admin
from ..maintenance.invariants import TenantCheck, check
from ..models import NoteInput, RetentionPolicy
from ..server import free_port, private_server
from ..settings import Settings
from .scripted_llm import Flaky, ScriptedLLM, slow_answer
from .texts import sentences

BATCH = 20  # notes per bulk step
# Turns promote often: a small short-term memory and a low heat threshold.
CHILD_ENV = {"AMEM_STM_CAPACITY": "2", "AMEM_PROMOTE_HEAT": "1", "AMEM_LLM_BASE_URL": "", "AMEM_LLM_API_KEY": ""}
LLM_TIMEOUT_S = 0.5  # with --llm-faults: the child's timeout, which one request in ten hangs past
QUEUED_LATENCY_S = 0.2  # with --queued: how long the model takes, so that kills land among analyses in flight
QUEUED_ENV = "AMEM_CHAOS_QUEUED"  # tells the child that bulk steps queue their analysis


MAINTENANCE = ("retain", "restore", "consolidate")  # the plan's maintenance steps
RETAIN_BATCH = 1  # notes a retention run archives per transaction in the plan: a kill lands between two often
RESTORED = 20  # notes a restore step brings back at most
CONSOLIDATE_EVERY = 40  # steps: each consolidation embeds the whole database again
FINAL_MIN_S, FINAL_S_PER_STEP = 600.0, 2.0  # the final run's time limit: past it, it counts as hung


def kinds(store: str) -> list[str]:
    """One cycle of the plan: the steps repeat in this order."""
    return ["bulk", "bulk", "add", "add", "add", "turn", "turn", "turn", "retain", "restore",
            *(["snapshot"] if store == "embedded" else [])]


def step_kind(step: int, store: str, to: str | None = None) -> str:
    """The plan's step; with `to`, a model, every CONSOLIDATE_EVERY-th step is a consolidation."""
    if to and step % CONSOLIDATE_EVERY == CONSOLIDATE_EVERY - 1:
        return "consolidate"
    cycle = kinds(store)
    return cycle[step % len(cycle)]


def consolidation_target(step: int, first: str, to: str) -> str:
    """The model a consolidation step moves the database to: `to`, then back to `first`, in turn."""
    return to if (step // CONSOLIDATE_EVERY) % 2 == 0 else first


def planned_sources(step: int, store: str, to: str | None = None) -> list[str]:
    kind = step_kind(step, store, to)
    return [f"chaos:{step}:{i}" for i in range(BATCH)] if kind == "bulk" else [f"chaos:{step}"] if kind == "add" else []


def _texts(step: int) -> list[str]:
    return sentences(BATCH, seed=1000 + step)


# -- the child ------------------------------------------------------------------------------------

def child(tenant: str, first: int, last: int, to: str | None = None, plan_model: str | None = None,
          ran_through: int = -1, drain: bool = False) -> None:
    """Run steps first..last of the plan, printing one JSON line per step that returned. The settings name the
    model the database was on when the parent last heard; `plan_model` is the plan's first model. A consolidation
    up to step `ran_through` is a repeat, skipped: the kills' rounds ran it (or the open finished it). With
    `drain`, then wait until no note of the tenant waits for its analysis."""
    print(json.dumps({"ready": True}), flush=True)
    settings, memory = _opened(Settings.from_env(), tenant)
    first_model = plan_model or settings.embedding_model
    try:
        for step in range(first, last + 1):
            kind = step_kind(step, settings.store_kind, to)
            texts = _texts(step)
            if kind == "bulk":
                sources = planned_sources(step, settings.store_kind, to)
                ids = memory.add_many([NoteInput(content=t, source=s) for t, s in zip(texts, sources, strict=True)],
                                      analyse=bool(os.environ.get(QUEUED_ENV)))
                done: dict[str, Any] = {"notes": ids}
            elif kind == "add":
                done = {"notes": [memory.add(texts[0], source=f"chaos:{step}", session="chaos").id]}
            elif kind == "turn":
                done = {"pages": [memory.add_turn(texts[0], texts[1], session_id=f"chaos-{step % 3}").id]}
            elif kind == "retain":  # keep half the notes searchable: the coldest others archived, a batch at a time
                kept = max(1, memory.stats(tenant=tenant).labels.get("Note", 0) // 2)
                archived = memory.retention.run(RetentionPolicy(max_notes=kept), batch=RETAIN_BATCH)
                done = {"archived": [a.note_id for a in archived]}
            elif kind == "restore":
                held = memory.list(limit=1_000, include_archived=True)
                done = {"restored": memory.retention.restore([n.id for n in held if n.archived_at][:RESTORED])}
            elif kind == "consolidate" and to and step <= ran_through:
                done = {}
            elif kind == "consolidate" and to:
                target = replace(settings, embedding_model=consolidation_target(step, first_model, to))
                memory.close()  # the embedded store serves one process; on Neo4j, this memory could write no more
                counts = ({} if _model(target) == canonical_model(target.embedding_model)
                          else admin.consolidate(target, Embedder.of(target)))  # done, but killed before it said so
                settings = target
                memory = AgenticMemory(settings, tenant=tenant)
                done = {"embedded_again": sum(counts.values()), "model": settings.embedding_model}
            else:  # closing writes a snapshot of the whole graph; the next step opens it again
                memory.close()
                memory = AgenticMemory(settings, tenant=tenant)
                done = {}
            print(json.dumps({"step": step, **done}), flush=True)
        if drain:
            print(json.dumps({"drained": memory.wait(FINAL_MIN_S, tenant=tenant)}), flush=True)
    finally:
        memory.close()


def _model(settings: Settings) -> str | None:
    """The model the database is marked with, or None while a consolidation is under way."""
    marker = admin.database_stats(settings).schema
    return None if marker.get("consolidating") else marker.get("embedding_model")


def _opened(settings: Settings, tenant: str) -> tuple[Settings, AgenticMemory]:
    """A memory on the database's model: the settings' if the database is on it (one load of an embedded
    store); else the marker's, after finishing a consolidation a kill stopped."""
    try:
        return settings, AgenticMemory(settings, tenant=tenant)
    except SchemaMismatch:
        marker = admin.database_stats(settings).schema
        settings = replace(settings, embedding_model=marker.get("embedding_model") or settings.embedding_model)
        if marker.get("consolidating"):
            counts = admin.consolidate(settings, Embedder.of(settings))
            print(json.dumps({"finished": {"embedded_again": sum(counts.values())}}), flush=True)
        return settings, AgenticMemory(settings, tenant=tenant)


# -- the parent -----------------------------------------------------------------------------------

class _Child:
    """A child writer whose acknowledged steps are read as it prints them."""

    def __init__(self, env: dict[str, str], tenant: str, first: int, last: int, to: str | None = None,
                 plan_model: str = "", ran_through: int = -1, drain: bool = False) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "amem_graph.bench.chaos", tenant, str(first), str(last), to or "", plan_model,
             str(ran_through), "drain" if drain else ""],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        self.drained: bool | None = None
        self.steps: list[dict[str, Any]] = []
        self.finished: list[dict[str, Any]] = []  # consolidations a kill stopped, which its open finished
        self.ready = threading.Event()  # set at its first acknowledged step (or its end): the kill comes after
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            record = json.loads(line)
            if "finished" in record:
                self.finished.append(record["finished"])
            elif "drained" in record:
                self.drained = record["drained"]
            elif not record.get("ready"):
                self.steps.append(record)
                self.ready.set()
        self.ready.set()

    def finish(self, timeout: float = 600.0) -> list[dict[str, Any]]:
        """The steps it acknowledged, once it ended; killed past `timeout` (the steps so far are returned)."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout)
        return self.steps

    def kill(self) -> list[dict[str, Any]]:
        if self.proc.poll() is None:
            self.proc.kill()
        return self.finish()


@contextmanager
def _target(settings: Settings, store: str, workdir: Path, llm: Flaky | None, queued: bool = False,
            ) -> Iterator[tuple[dict[str, str], Any]]:
    """The environment a child writes with, and what to kill: a private Neo4j server (never the user's),
    or nothing for the embedded store, whose process is the child. With `llm`, the child analyses through
    it, served on loopback (inline, unless `queued`: then through the queue, with a model that takes
    QUEUED_LATENCY_S when `llm` is None; on Neo4j the child only queues and worker processes analyse)."""
    base = {**os.environ, **CHILD_ENV, "HF_HUB_OFFLINE": "1", "AMEM_STORE": store}
    with contextlib.ExitStack() as stack:
        model = llm if llm is not None else slow_answer(QUEUED_LATENCY_S) if queued else None
        if model is not None:
            served = stack.enter_context(ScriptedLLM(model))
            base.update(AMEM_LLM_BASE_URL=served.base_url, AMEM_LLM_API_KEY="chaos", AMEM_LLM_MODEL="scripted",
                        AMEM_LLM_TIMEOUT=str(LLM_TIMEOUT_S), AMEM_LLM_MAX_RETRIES="1", AMEM_LLM_BACKOFF="0",
                        AMEM_LLM_BACKGROUND="1" if queued else "0")
        if queued:
            base.update({QUEUED_ENV: "1", "AMEM_LLM_WORKER": "off" if store == "neo4j" else "thread"})
        if store == "embedded":
            yield {**base, "AMEM_DATA_DIR": str(workdir / "embedded")}, None
            return
        server, info = stack.enter_context(private_server(workdir / "neo4j", home=settings.home,
                                                          version=settings.neo4j_version))
        yield {**base, "NEO4J_URI": info.uri, "NEO4J_USER": info.user, "NEO4J_PASSWORD": info.password}, server


class _Worker:
    """An `amem-graph worker` process (Neo4j, with `queued`): killed with the rest each round."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", "from amem_graph.cli import main; main()", "worker"],
                                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.kill()


def run(settings: Settings, store: str, *, kills: int, steps_per_child: int = 60, min_delay: float = 0.2,
        max_delay: float = 3.0, seed: int = 7, llm_faults: bool = False, workdir: Path,
        consolidate_to: str | None = None, queued: bool = False) -> dict[str, Any]:
    rng = random.Random(seed)
    tenant = f"chaos-{uuid.uuid4().hex[:8]}"
    acked_notes: dict[str, int] = {}  # note id → step
    acked_pages: set[str] = set()
    rounds: list[dict[str, Any]] = []
    next_step = 0
    archived = restored = embedded_again = 0  # what the acknowledged maintenance steps archived, restored, embedded
    llm = Flaky(LLM_TIMEOUT_S, seed=seed) if llm_faults else None
    workers = 0  # worker processes killed (Neo4j, queued)
    with _target(settings, store, workdir, llm, queued) as (env, server):
        separate = queued and store == "neo4j"  # the analyses run in a process of their own
        plan_model = Settings.from_env(env).embedding_model

        def tally(done: list[dict[str, Any]], finished: list[dict[str, Any]]) -> None:
            nonlocal archived, restored, embedded_again
            embedded_again += sum(f["embedded_again"] for f in finished)  # a stopped consolidation's end, too
            for record in done:
                acked_notes.update({i: record["step"] for i in record.get("notes", [])})
                acked_pages.update(record.get("pages", []))
                archived += len(record.get("archived", []))
                restored += len(record.get("restored", []))
                embedded_again += record.get("embedded_again", 0)
                if record.get("model"):  # the next child opens on it first (a load of the embedded store saved)
                    env["AMEM_EMBEDDING_MODEL"] = record["model"]

        # The worker process runs across rounds: killed at each round's moment, started again once the server is
        # back, so that it is analysing (not still starting) when the next kill comes.
        analysing = _Worker(env) if separate else None
        for _ in range(kills):
            worker = _Child(env, tenant, next_step, next_step + steps_per_child - 1, consolidate_to, plan_model)
            worker.ready.wait(300)  # once it writes: a kill while it loads the model would test nothing
            time.sleep(rng.uniform(min_delay, max_delay))
            if analysing is not None:
                analysing.kill()
                workers += 1
            if server is not None:
                pid = server.pid()
                if pid is not None:
                    os.kill(pid, signal.SIGKILL)
                    _await_exit(pid)
            done = worker.kill()
            if server is not None:
                # New ports: the old ones are ephemeral-range ports that a client socket may hold by now.
                info = server.start(bolt_port=free_port(), http_port=free_port())
                env["NEO4J_URI"] = info.uri
            tally(done, worker.finished)
            last = max((r["step"] for r in done), default=next_step - 1)
            rounds.append({"from_step": next_step, "acknowledged_steps": len(done),
                           "killed_during": step_kind(last + 1, store, consolidate_to),  # the step not returned
                           **_verify(env, tenant, store, acked_notes, acked_pages, last, consolidate_to)})
            next_step = last + 1
            if separate:
                analysing = _Worker(env)
        # The plan again from its start, to the end (a whole cycle at least, so that every kind of step ran):
        # repeats are skipped, the rest completes.
        ran_through = next_step - 1
        next_step = max(next_step, len(kinds(store)), CONSOLIDATE_EVERY if consolidate_to else 0)
        worker = _Child(env, tenant, 0, next_step - 1, consolidate_to, plan_model, ran_through, drain=queued)
        done = worker.finish(max(FINAL_MIN_S, FINAL_S_PER_STEP * next_step))
        if analysing is not None:
            analysing.stop()
        tally(done, worker.finished)
        final = _verify(env, tenant, store, acked_notes, acked_pages, max(next_step - 1, 0), consolidate_to,
                        complete=True)
        final["rerun_complete"] = sorted(r["step"] for r in done) == list(range(next_step))  # every step returned
        final["sound"] = final["sound"] and final["rerun_complete"]
        if queued:  # the queue drained: no note waits, and (check) each was analysed once
            final["queue_drained"] = bool(worker.drained) and not final["analyses"].get("pending")
            final["sound"] = final["sound"] and final["queue_drained"]
    failed = [r for r in rounds if not r["sound"]]
    return {
        "benchmark": "chaos",
        "store": store,
        "kills": kills,
        "killed": "the Neo4j server (SIGKILL), then the writer" if store == "neo4j" else "the writer process (SIGKILL)",
        "llm": "a scripted model failing one request in two" if llm else
               f"a scripted model answering in {QUEUED_LATENCY_S} s" if queued else "none (the heuristic analyser)",
        "queued": ("through the queue: " + ("worker processes, killed each round" if store == "neo4j" else
                                           "the writer's own worker thread")) if queued else False,
        **({"workers_killed": workers} if queued and store == "neo4j" else {}),
        # Analyses applied by the last kill (the rest the final run drained): the kills landed among them.
        **({"analysed_before_the_last_kill": rounds[-1].get("analyses", {}).get("llm", 0) if rounds else 0} if queued else {}),
        **({"llm_replies": dict(llm.served)} if llm else {}),
        "steps_planned": next_step,
        "acknowledged": {"notes": len(acked_notes), "pages": len(acked_pages)},
        "killed_during": dict(Counter(r["killed_during"] for r in rounds)),
        "killed_during_maintenance": sum(1 for r in rounds if r["killed_during"] in MAINTENANCE),
        "maintenance": {"archived": archived, "restored": restored, "embedded_again": embedded_again,
                        "consolidated_to": consolidate_to},
        "rounds_unsound": len(failed),
        "lost": sum(r["lost"] for r in rounds) + final["lost"],
        "partial_batches": sum(r["partial_batches"] for r in rounds) + final["partial_batches"],
        "open_failures": sum(1 for r in rounds if r.get("open_error")) + bool(final.get("open_error")),
        "invariant_violations": [r["invariant_violations"] for r in [*rounds, final] if r["invariant_violations"]],
        "final": final,
        "sound": not failed and final["sound"],
        "rounds": rounds,
    }


def _await_exit(pid: int) -> None:
    """Until a killed server is gone (reaped, when this process started it), so its files are free again."""
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:  # not ours: wait for the kernel to take it away
        status = Path(f"/proc/{pid}/status")
        while status.exists() and "\tZ" not in next((line for line in status.read_text().splitlines()
                                                        if line.startswith("State:")), ""):
            time.sleep(0.05)


def _verify(env: dict[str, str], tenant: str, store: str, acked_notes: dict[str, int], acked_pages: set[str],
            last_step: int, to: str | None = None, *, complete: bool = False) -> dict[str, Any]:
    settings = Settings.from_env(env)

    def exported(model: str) -> tuple[dict[str, Any], list[dict[str, Any]], TenantCheck | None]:
        """The tenant's export, and `check` of it with its ranking statistics."""
        with AgenticMemory(replace(settings, embedding_model=model), tenant=tenant) as memory:
            header, records = memory.admin.export()
            return header, list(records), memory.admin.check()

    try:
        try:  # on the model the parent last heard of: one load of an embedded store
            header, records, checked = exported(settings.embedding_model)
        except SchemaMismatch:
            marker = admin.database_stats(settings).schema
            if marker.get("consolidating"):  # a consolidation the kill stopped: no memory opens until it is done
                header, records = admin.export_unchecked(settings, tenant)
                checked = None
            else:
                header, records, checked = exported(marker["embedding_model"])
    except AmemError as err:  # the store would not open: the worst outcome, reported as such
        return {"open_error": str(err), "lost": len(acked_notes), "partial_batches": 0, "invariant_violations": {},
                "sound": False}
    report = checked or check(tenant, header["dimension"], records)  # unfinished consolidation: no statistics read
    notes = {r["props"]["id"]: r["props"] for r in records if r["kind"] == "node" and "Note" in r["labels"]}
    pages = {r["props"]["id"] for r in records if r["kind"] == "node" and "Page" in r["labels"]}
    lost = [i for i in acked_notes if i not in notes] + [p for p in acked_pages if p not in pages]
    by_source: dict[str, int] = {}
    for props in notes.values():
        by_source[props.get("source") or ""] = by_source.get(props.get("source") or "", 0) + 1
    partial = 0
    planned = 0
    for step in range(last_step + 1):
        sources = planned_sources(step, store, to)
        held = sum(1 for s in sources if s in by_source)
        planned += len(sources)
        partial += step_kind(step, store, to) == "bulk" and 0 < held < len(sources)
    duplicated = sum(n - 1 for s, n in by_source.items() if s.startswith("chaos:") and n > 1)
    result: dict[str, Any] = {
        "lost": len(lost), "lost_ids": lost[:10], "partial_batches": partial, "duplicated": duplicated,
        "notes": len(notes), "pages": len(pages), "invariant_violations": report.counts,
        "analyses": dict(Counter(props.get("analysis") or "none" for props in notes.values())),
    }
    if complete:
        missing = sum(1 for step in range(last_step + 1) for s in planned_sources(step, store, to)
                      if s not in by_source)
        result.update(planned_notes=planned, missing_after_rerun=missing)
    result["sound"] = not lost and not partial and not duplicated and report.sound and not result.get("missing_after_rerun")
    return result


if __name__ == "__main__":
    child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *[a or None for a in sys.argv[4:6]],
          int(sys.argv[6]) if len(sys.argv) > 6 else -1, len(sys.argv) > 7 and sys.argv[7] == "drain")
