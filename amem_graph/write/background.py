"""The analysis worker: applies the analyses that writes queued (notes stored with the offline analysis, marked
pending) with the configured analyser, any tenant's, in a thread of this process or in `amem-graph worker`.

The queue is the notes themselves, in the store: a kill loses none of it. A worker claims pending notes as its slots
free up (at most `concurrency` analyses in flight), fairly between tenants, for a lease; a claim that outlives its
worker expires and another worker takes the note. An analysis applies only while its note still waits for it
(`apply_evolution` checks under the tenant's lock), so none applies twice. See docs/write-path.md."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from ..core import telemetry
from ..core.log import event
from ..errors import AmemError
from ..store.base import NoteStore
from .evolution import Evolver

POLL_S = 1.0  # how often an idle worker looks for notes other processes queued
CLOSE_S = 5.0  # how long close() lets the analyses in flight finish before it hands them back


class AnalysisWorker:
    """Claims pending notes and applies their analyses (`Evolver.analyse_pending`), `concurrency` at a time."""

    def __init__(self, store: NoteStore, evolver: Evolver, *, concurrency: int, lease_s: float,
                 enabled: bool = True) -> None:
        self.store = store
        self.evolver = evolver
        self.concurrency = max(1, concurrency)
        self.lease_s = lease_s
        self.enabled = enabled  # off: this process queues, another one's worker analyses
        self.id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.counts = {"applied": 0, "skipped": 0, "failed": 0}  # since this worker started
        self._in_flight: dict[str, Future[None]] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._on_done: Callable[[], None] | None = None

    @property
    def started(self) -> bool:
        return self._pool is not None

    def notify(self) -> None:
        """Something was queued: start the worker if it is not running, and have it look now."""
        if not self.enabled or self._stop.is_set():
            return
        with self._lock:
            if self._thread is None:
                self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="amem-analysis")
                self._thread = threading.Thread(target=self._run, name="amem-analysis-worker", daemon=True)
                self._thread.start()
        self._wake.set()

    def run(self, until: Callable[[], bool] = lambda: False, on_done: Callable[[], None] | None = None) -> dict[str, int]:
        """Work in this thread (`amem-graph worker`) until `until()` holds with nothing in flight, or `close()` is
        called; `on_done()` after each analysis. Returns the counts of what it did."""
        with self._lock:
            self._pool = self._pool or ThreadPoolExecutor(self.concurrency, thread_name_prefix="amem-analysis")
            self._on_done = on_done
        try:
            self._run(lambda: not self._in_flight and until())
        finally:
            self._on_done = None
        return dict(self.counts)

    def drained(self, empty: Callable[[], bool], timeout: float | None) -> bool:
        """Wait until `empty()` holds, for at most `timeout` seconds (None: no bound)."""
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        while not empty():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def close(self, timeout: float = CLOSE_S) -> None:
        """Stop claiming; let the analyses in flight finish for `timeout` seconds, then hand back the rest's claims
        (their calls may still end and apply: an analysis applies at most once)."""
        self._stop.set()
        self._wake.set()
        thread, pool = self._thread, self._pool
        if thread is not None:
            thread.join(timeout)
        with self._lock:
            flying = dict(self._in_flight)
        if flying:
            wait(list(flying.values()), timeout=timeout)
        with self._lock:
            left = list(self._in_flight)
        if left:
            try:
                self.store.claim_analyses(self.id, 0, self.lease_s, release=left)
            except AmemError as err:  # the claims expire at their lease's end instead
                event("analysis_handover_failed", worker=self.id, notes=len(left), error=str(err))
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def _run(self, until: Callable[[], bool] = lambda: False) -> None:
        while not self._stop.is_set() and not until():
            with self._lock:
                free = self.concurrency - len(self._in_flight)
            claimed = []
            if free > 0:
                try:
                    claimed = self.store.claim_analyses(self.id, free, self.lease_s)
                except AmemError as err:  # the store is down: look again later
                    event("analysis_claim_failed", worker=self.id, error=str(err))
            for tenant, note_id in claimed:
                self._start(tenant, note_id)
            # Woken by a write that queued a note or an analysis that freed a slot; else it looks again in a while.
            self._wake.wait(POLL_S)
            self._wake.clear()

    def _start(self, tenant: str, note_id: str) -> None:
        assert self._pool is not None
        with self._lock:  # held while submitting: the analysis cannot leave `_in_flight` before it is in it
            self._in_flight[note_id] = self._pool.submit(self._analyse, tenant, note_id)

    def _analyse(self, tenant: str, note_id: str) -> None:
        try:
            with telemetry.span("amem.analysis", **{"amem.tenant": tenant, "amem.note_id": note_id,
                                                    "amem.worker": self.id}) as span:
                outcome = self.evolver.analyse_pending(tenant, note_id)
                span.set(**{"amem.analysis.outcome": "applied" if outcome is not None else "skipped"})
            self._count("applied" if outcome is not None else "skipped")
            # Applied, dropped, or given up after concurrent writes kept moving its neighbours: the claim goes, so
            # that a note still queued is taken again now, not at its lease's end.
            self._release(note_id)
        except Exception as err:  # noqa: BLE001 - the note stays queued; its claim expires (no retry loop)
            self._count("failed")
            event("analysis_failed", logging.WARNING, tenant=tenant, note_id=note_id, error=f"{type(err).__name__}: {err}")
        finally:
            with self._lock:
                self._in_flight.pop(note_id, None)
                report = self._on_done
            self._wake.set()
            if report is not None:
                report()

    def _count(self, outcome: str) -> None:
        telemetry.analysis_done(outcome)
        with self._lock:
            self.counts[outcome] += 1

    def _release(self, note_id: str) -> None:
        try:
            self.store.claim_analyses(self.id, 0, self.lease_s, release=[note_id])
        except AmemError:  # the claim expires at its lease's end instead
            pass
