"""A LangGraph `BaseStore` on the memory: a namespace is a tenant ("users", "alice") → "users.alice", an
item a note (analysed, linked, evolving like any other) keyed by its key, and search is semantic over
the note vector index."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np
from langgraph.store import base as langgraph_store

from ...aio import AsyncAgenticMemory
from ...api import AgenticMemory
from ...core import validation
from ...errors import InvalidInput, NoteNotFound
from ...models import Attached, Attachment, SearchFilter
from .notes import upsert
from .values import check_filter, matches, to_json
from .vectorstore import EVERY

KIND = "item"
LABEL = re.compile(r"[A-Za-z0-9_:@-]+")  # "." joins the labels, so it cannot be in one (nor can LangGraph's)


def tenant_of(namespace: Sequence[str]) -> str:
    if not namespace or not all(isinstance(label, str) and LABEL.fullmatch(label) for label in namespace):
        raise langgraph_store.InvalidNamespaceError(
            f"namespace {tuple(namespace)!r}: labels must be non-empty and use only letters, digits, '_', ':', '@', '-'"
        )
    try:
        return validation.tenant(".".join(namespace))
    except InvalidInput as err:
        raise langgraph_store.InvalidNamespaceError(f"namespace {tuple(namespace)!r} is not a valid tenant: {err}") from None


MAX_KEY_CHARS = 1_000


def item_id(tenant: str, key: str) -> str:
    """A store item's note id: fixed by tenant and key, so a put finds the note of an earlier put."""
    key = validation.text(key, "a store key", MAX_KEY_CHARS, allow_empty=True)
    return "kv-" + hashlib.sha256(f"{tenant}\x00{key}".encode()).hexdigest()[:32]


def namespace_matches(namespace: tuple[str, ...], condition: langgraph_store.MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path):]
    return all(want in ("*", have) for have, want in zip(part, path, strict=True))


class AmemStore(langgraph_store.BaseStore):
    """LangGraph's long-term memory store on amem-graph.

    `fields` are the value paths whose text is embedded and analysed (LangGraph's `index["fields"]`);
    by default every string in the value. A put's `index=[...]` overrides them for that item;
    `index=False` still stores a note (every note is searchable here). TTLs are not supported.
    Namespaces are tenants of the whole database (not only `memory.tenant`'s): an item lives among the
    tenant's other notes, links to them and evolves them. `langgraph_store.SearchItem.score` is cosine normalised to
    [0, 1]; `updated_at` is the item's last put. A search leaves out an item a later note contradicted, as
    the engine's search does, unless `include_superseded`; `get` by key returns it.

    With `as_of` (a recorded time: a datetime or an ISO-8601 string), the store is a read-only view of the
    items as they stood then (LangGraph's operations carry no time, so the view holds it): an item from its
    first put by then, with the value put last by then and `updated_at` when that was put; superseded and
    archived as of then; a search ranks by today's vectors. A deleted item is erased from every time. A put
    or a delete on the view raises InvalidInput and writes nothing.
    """

    def __init__(
        self, memory: AgenticMemory, *, fields: Sequence[str] | None = None, include_superseded: bool = False,
        as_of: datetime | str | None = None,
    ) -> None:
        self.memory = memory
        self._async = AsyncAgenticMemory(memory)  # abatch's calls, on a bounded pool off the event loop
        self.fields = list(fields) if fields else None
        self.include_superseded = include_superseded
        self.as_of = validation.event_time(as_of, "as_of")

    def batch(self, ops: Iterable[langgraph_store.Op]) -> list[langgraph_store.Result]:
        return [self._one(op) for op in ops]

    async def abatch(self, ops: Iterable[langgraph_store.Op]) -> list[langgraph_store.Result]:
        return await self._async.call(self.batch, list(ops))

    def _one(self, op: langgraph_store.Op) -> langgraph_store.Result:
        if isinstance(op, langgraph_store.GetOp):
            return self._get(tenant_of(op.namespace), op.key)
        if isinstance(op, langgraph_store.PutOp):
            return self._put(op)
        if isinstance(op, langgraph_store.SearchOp):
            return self._search(op)
        if isinstance(op, langgraph_store.ListNamespacesOp):
            return self._namespaces(op)
        raise InvalidInput(f"unknown store operation {type(op).__name__}")

    # -- items ------------------------------------------------------------------------------------

    def _get(self, tenant: str, key: str) -> langgraph_store.Item | None:
        found = self.memory.attachments.attached(tenant, [item_id(tenant, key)], as_of=self.as_of)
        return self._item(found[0]) if found and found[0].kind == KIND else None

    def _put(self, op: langgraph_store.PutOp) -> None:
        if self.as_of is not None:
            raise InvalidInput(f"this store is a read-only view as of {self.as_of.isoformat()}: put and delete on "
                               "an AmemStore without as_of")
        tenant = tenant_of(op.namespace)
        note_id = item_id(tenant, op.key)
        if op.value is None:
            with suppress(NoteNotFound):
                self.memory.delete(note_id, tenant=tenant)
            return
        if not isinstance(op.value, dict):
            raise InvalidInput(f"a store value must be a dict, got {type(op.value).__name__}")
        value = to_json(op.value, f"the value of {op.key!r}")
        text = validation.text(self._text(op.value, op.index), "item text", self.memory.settings.max_content_chars)
        if self.memory.attachments.taken_elsewhere(tenant, [note_id]):  # a 128-bit hash: only by design
            raise InvalidInput(f"the note id of {op.key!r} in {op.namespace!r} is taken by another tenant")
        upsert(self.memory, tenant, note_id, text, source=f"store:{op.key}", reason="store item replaced")
        self.memory.attachments.attach(tenant, KIND, [Attachment(note_id, value, store_key=op.key)])

    def _text(self, value: dict[str, Any], index: Any) -> str:
        fields = index if isinstance(index, list) else self.fields
        texts = [t for path in fields for t in langgraph_store.embed.get_text_at_path(value, path)] if fields else _strings(value)
        return "\n".join(t for t in texts if t.strip()) or json.dumps(value, ensure_ascii=False, sort_keys=True)

    def _item(self, found: Attached, score: float | None = None, search: bool = False) -> langgraph_store.Item:
        fields = {
            "namespace": tuple(found.note.tenant.split(".")), "key": found.store_key,
            "value": json.loads(found.attached or "{}"),
            "created_at": found.note.created_at, "updated_at": found.attached_at or found.note.created_at,
        }
        return langgraph_store.SearchItem(**fields, score=score) if search else langgraph_store.Item(**fields)

    # -- search -----------------------------------------------------------------------------------

    def _search(self, op: langgraph_store.SearchOp) -> list[langgraph_store.SearchItem]:
        validation.window(op.limit, op.offset)
        check_filter(op.filter)
        wanted = op.offset + op.limit
        vector = None
        if op.query:
            vector = self.memory.embedder.embed_query(validation.text(op.query, "query", validation.MAX_QUERY_CHARS))
        found: list[Attached] = []
        for tenant in self._tenants(op.namespace_prefix):
            if vector is not None:
                found += self._nearest(tenant, vector, EVERY if op.filter else wanted)
            else:
                found += self.memory.attachments.keyed(tenant, limit=None if op.filter else wanted,
                                                       superseded=self.include_superseded, as_of=self.as_of)
        found = [a for a in found if not op.filter or matches(json.loads(a.attached or "{}"), op.filter)]
        if vector is not None:
            found.sort(key=lambda a: -(a.score or 0.0))
        else:
            found.sort(key=lambda a: a.attached_at or a.note.created_at, reverse=True)
        return [self._item(a, a.score, search=True) for a in found[op.offset: wanted]]

    def _nearest(self, tenant: str, vector: np.ndarray, k: int) -> list[Attached]:
        """The k items nearest to `vector`: from the note index when it holds enough of them among the
        tenant's other notes (chat messages, documents), else by an exact scan of the items."""
        store = self.memory.attachments
        if k < EVERY:
            scope = SearchFilter(include_superseded=self.include_superseded, as_of=self.as_of)
            hits = store.notes_near(tenant, vector, 3 * k + 10, scope)
            scores = {note.id: score for note, score in hits}
            items = [a for a in store.attached(tenant, list(scores), as_of=self.as_of) if a.kind == KIND]
            if len(items) >= k or len(hits) < 3 * k + 10:
                return [replace(a, score=scores[a.note.id]) for a in items][:k]
        return store.search(tenant, KIND, vector, k, external=False, superseded=self.include_superseded,
                            as_of=self.as_of)

    def _tenants(self, prefix: Sequence[str]) -> list[str]:
        if not prefix:
            return self.memory.attachments.keyed_tenants(self.as_of)
        root = tenant_of(prefix)
        # Read below the root only: listing every namespace of the database costs a read of every item.
        below = self.memory.attachments.keyed_tenants(self.as_of, prefix=root)
        return [t for t in below if t == root or t.startswith(root + ".")]

    def _namespaces(self, op: langgraph_store.ListNamespacesOp) -> list[tuple[str, ...]]:
        spaces = {tuple(t.split(".")) for t in self.memory.attachments.keyed_tenants(self.as_of)}
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
