"""Structured log lines: one JSON object per event, so operators can grep and parse why something happened.

Each public memory operation also logs one `memory_op` event at INFO (`op`, `tenant`, `duration_ms`,
`outcome`, and what it did: `evolved`, LLM `tokens`), never the content, and tells the observers that
`observe` registered (a server's metrics)."""

from __future__ import annotations

import contextvars
import functools
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from . import telemetry

logger = logging.getLogger("amem_graph")
P = ParamSpec("P")
R = TypeVar("R")


def event(name: str, level: int = logging.WARNING, **fields: Any) -> None:
    """Log `{"event": name, ...fields}` as one line."""
    if logger.isEnabledFor(level):
        logger.log(level, json.dumps({"event": name, **fields}, default=str, ensure_ascii=False, sort_keys=True))


@dataclass
class Operation:
    """One public call as it runs: what it did is added to it (`report`), and its LLM tokens add up."""

    op: str
    tenant: str
    fields: dict[str, Any] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_calls: int = 0

    def summary(self, seconds: float, outcome: str) -> dict[str, Any]:
        return {"op": self.op, "tenant": self.tenant, "duration_ms": round(seconds * 1000, 2), "outcome": outcome,
                "tokens": self.prompt_tokens + self.completion_tokens, "llm_calls": self.llm_calls, **self.fields}


Observer = Callable[[Operation, float, "BaseException | None"], None]
_current: contextvars.ContextVar[Operation | None] = contextvars.ContextVar("amem_operation", default=None)
_observers: list[Observer] = []
_observers_lock = threading.Lock()


def observe(observer: Observer) -> Callable[[], None]:
    """Call `observer(operation, seconds, error)` after each operation; returns what unregisters it."""
    with _observers_lock:
        _observers.append(observer)

    def stop() -> None:
        with _observers_lock:
            if observer in _observers:
                _observers.remove(observer)

    return stop


def report(**fields: Any) -> None:
    """Add to what the running operation reports (nothing outside one)."""
    if (current := _current.get()) is not None:
        current.fields.update(fields)


def llm_tokens(prompt: int, completion: int) -> None:
    """Count an LLM call's tokens towards the running operation (calls on other threads are not its own)."""
    if (current := _current.get()) is not None:
        current.llm_calls += 1
        current.prompt_tokens += prompt
        current.completion_tokens += completion


def operation(op: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A public method of a tenant-scoped object (its `tenant`, or the call's `tenant=`) as an operation.
    Calls made inside another operation are part of it, not operations of their own."""

    def decorate(method: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(method)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            if _current.get() is not None:
                return method(*args, **kwargs)
            tenant = kwargs.get("tenant") or getattr(args[0], "tenant", None)
            current = Operation(op, str(tenant))
            token = _current.set(current)
            started = time.perf_counter()
            error: BaseException | None = None
            with telemetry.span(f"amem.{op}", **{"amem.operation": op, "amem.tenant": current.tenant}) as span:
                try:
                    return method(*args, **kwargs)
                except BaseException as err:
                    error = err
                    raise
                finally:
                    _current.reset(token)
                    span.set(**{f"amem.{key}": value for key, value in current.fields.items()},
                             **{"amem.llm_calls": current.llm_calls})
                    _finished(current, time.perf_counter() - started, error)

        return run

    return decorate


def _finished(current: Operation, seconds: float, error: BaseException | None) -> None:
    outcome = "ok" if error is None else type(error).__name__
    telemetry.operation_done(current.op, seconds, error)
    event("memory_op", logging.INFO, **current.summary(seconds, outcome))
    with _observers_lock:
        observers = list(_observers)
    for observer in observers:
        try:
            observer(current, seconds, error)
        except Exception:  # noqa: BLE001 - metrics must never break a memory operation
            logger.exception("an operation observer failed")
