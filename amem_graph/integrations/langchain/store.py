"""A LangGraph `BaseStore` on the memory: a namespace is a tenant ("users", "alice") → "users.alice", an
item a note (analysed, linked, evolving like any other) keyed by its key, and search is semantic over
the note vector index."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.store.base.embed import get_text_at_path

from ... import validation
from ...api import MAX_K, AgenticMemory
from ...errors import InvalidInput, NoteNotFound
from ...store.base import Attached, Attachment
from .vectorstore import to_json

LABEL = re.compile(r"[A-Za-z0-9_:@-]+")  # "." joins the labels, so it cannot be in one (nor can LangGraph's)


def tenant_of(namespace: Sequence[str]) -> str:
    if not namespace or not all(isinstance(label, str) and LABEL.fullmatch(label) for label in namespace):
        raise InvalidNamespaceError(
            f"namespace {tuple(namespace)!r}: labels must be non-empty and use only letters, digits, '_', ':', '@', '-'"
        )
    try:
        return validation.tenant(".".join(namespace))
    except InvalidInput as err:
        raise InvalidNamespaceError(f"namespace {tuple(namespace)!r} is not a valid tenant: {err}") from None


def item_id(tenant: str, key: str) -> str:
    """A store item's note id: fixed by tenant and key, so a put finds the note of an earlier put."""
    return "kv-" + hashlib.sha256(f"{tenant}\x00{key}".encode()).hexdigest()[:32]


def matches(value: Any, condition: Any) -> bool:
    """LangGraph's filter: equality, nested dicts, and the operators $eq $ne $gt $gte $lt $lte."""
    if isinstance(condition, dict) and any(str(k).startswith("$") for k in condition):
        return all(_compare(value, op, operand) for op, operand in condition.items())
    if isinstance(condition, dict):
        return isinstance(value, dict) and all(matches(value.get(k), v) for k, v in condition.items())
    return value == condition


def _compare(value: Any, op: str, operand: Any) -> bool:
    if op in ("$eq", "$ne"):
        return (value == operand) == (op == "$eq")
    if value is None or op not in ("$gt", "$gte", "$lt", "$lte"):
        return False
    try:
        left, right = float(value), float(operand)
    except (TypeError, ValueError):
        return False
    return {"$gt": left > right, "$gte": left >= right, "$lt": left < right, "$lte": left <= right}[op]


def namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path):]
    return all(want in ("*", have) for have, want in zip(part, path, strict=True))


class AmemStore(BaseStore):
    """LangGraph's long-term memory store on amem-graph.

    `fields` are the value paths whose text is embedded and analysed (LangGraph's `index["fields"]`);
    by default every string in the value. A put's `index=[...]` overrides them for that item;
    `index=False` still stores a note (every note is searchable here). TTLs are not supported.
    """

    def __init__(self, memory: AgenticMemory, *, fields: Sequence[str] | None = None) -> None:
        self.memory = memory
        self.fields = list(fields) if fields else None

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._one(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _one(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(tenant_of(op.namespace), op.key)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op)
        raise InvalidInput(f"unknown store operation {type(op).__name__}")

    # -- items ------------------------------------------------------------------------------------

    def _get(self, tenant: str, key: str) -> Item | None:
        found = self.memory.store.attached(tenant, [item_id(tenant, key)])
        return self._item(found[0]) if found and found[0].store_key is not None else None

    def _put(self, op: PutOp) -> None:
        tenant = tenant_of(op.namespace)
        note_id = item_id(tenant, op.key)
        if op.value is None:
            try:
                self.memory.delete(note_id, tenant=tenant)
            except NoteNotFound:
                pass
            return
        if not isinstance(op.value, dict):
            raise InvalidInput(f"a store value must be a dict, got {type(op.value).__name__}")
        value = to_json(op.value, f"the value of {op.key!r}")
        text = validation.text(self._text(op.value, op.index), "item text", self.memory.settings.max_content_chars)
        try:
            current = self.memory.get(note_id, tenant=tenant).content
        except NoteNotFound:
            current = None
        if current is None:
            self.memory.add(text, tenant=tenant, id=note_id, source=f"store:{op.key}")
        elif current != text:
            self.memory.update(note_id, tenant=tenant, content=text, reason="store item replaced")
        self.memory.store.attach(tenant, [Attachment(note_id, value, store_key=op.key)])

    def _text(self, value: dict[str, Any], index: Any) -> str:
        fields = index if isinstance(index, list) else self.fields
        texts = [t for path in fields for t in get_text_at_path(value, path)] if fields else _strings(value)
        return "\n".join(t for t in texts if t.strip()) or json.dumps(value, ensure_ascii=False, sort_keys=True)

    def _item(self, found: Attached, score: float | None = None, search: bool = False) -> Item:
        note = found.note
        fields = {
            "namespace": tuple(note.tenant.split(".")), "key": found.store_key, "value": json.loads(found.attached),
            "created_at": note.created_at, "updated_at": note.updated_at,
        }
        return SearchItem(**fields, score=score) if search else Item(**fields)

    # -- search -----------------------------------------------------------------------------------

    def _search(self, op: SearchOp) -> list[SearchItem]:
        if op.limit < 1 or op.offset < 0:
            raise InvalidInput("limit must be at least 1 and offset at least 0")
        wanted = op.offset + op.limit
        found: list[tuple[Attached, float | None]] = []
        for tenant in self._tenants(op.namespace_prefix):
            found += self._semantic(tenant, op.query, wanted, bool(op.filter)) if op.query else [
                (a, None) for a in self.memory.store.keyed(tenant, limit=MAX_K if op.filter else wanted)
            ]
        found = [(a, s) for a, s in found if not op.filter or matches(json.loads(a.attached), op.filter)]
        if op.query:
            found.sort(key=lambda pair: -(pair[1] or 0.0))
        else:
            found.sort(key=lambda pair: pair[0].note.updated_at or pair[0].note.created_at, reverse=True)
        return [self._item(a, s, search=True) for a, s in found[op.offset: wanted]]

    def _semantic(self, tenant: str, query: str, wanted: int, filtered: bool) -> list[tuple[Attached, float | None]]:
        vector = self.memory.embedder.embed_one(validation.text(query, "query", validation.MAX_QUERY_CHARS))
        # The tenant may hold other notes (chat messages, documents): over-fetch, then keep the items.
        k = min(MAX_K, wanted * (8 if filtered else 3) + 10)
        hits = self.memory.store.vector_search(tenant, np.asarray(vector), k)
        items = {a.note.id: a for a in self.memory.store.attached(tenant, [n.id for n, _ in hits]) if a.store_key}
        return [(items[n.id], score) for n, score in hits if n.id in items]

    def _tenants(self, prefix: Sequence[str]) -> list[str]:
        every = self.memory.store.keyed_tenants()
        if not prefix:
            return every
        root = tenant_of(prefix)
        return [t for t in every if t == root or t.startswith(root + ".")]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        spaces = {tuple(t.split(".")) for t in self.memory.store.keyed_tenants()}
        spaces = {s for s in spaces if all(namespace_matches(s, c) for c in op.match_conditions or ())}
        if op.max_depth is not None:
            spaces = {s[: op.max_depth] for s in spaces}
        return sorted(spaces)[op.offset: op.offset + op.limit]


def _strings(value: Any) -> list[str]:
    """Every string in a JSON value, depth first (what is embedded when no fields are named)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
