"""An in-process property graph: labelled nodes and typed relationships with properties, the same shape as
the Neo4j database, with the unique constraints the schema declares and all-or-nothing transactions.

Every change goes through a few journaled operations. Inside `transaction()` each one records its
inverse; an exception undoes them in reverse order, so the graph is as it was. A committed transaction
hands its operations to `on_commit` (the persistence journal)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

# (label, properties) that identify at most one node, as the Neo4j schema's constraints do.
UNIQUE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Note", ("id",)), ("Note", ("tenant", "source", "content_hash")), ("Evolution", ("id",)),
    ("TenantLock", ("tenant",)), ("AmemSchema", ("name",)), ("Page", ("id",)), ("Chain", ("id",)),
    ("Segment", ("id",)), ("Persona", ("tenant",)), ("Fact", ("id",)), ("Entity", ("tenant", "key")),
    ("Passage", ("id",)), ("Retention", ("tenant",)),
)

SESSION_KEYS = {"Note": "session", "Page": "session_id"}  # what `in_session` finds nodes by
VALUE_KEYS = {"Note": "analysis"}  # what `having` finds nodes by (the analysis queue: pending notes)
Op = list[Any]  # a journaled operation, JSON-ready but for numpy vectors (see persist.py)


class ConstraintViolation(Exception):
    """A write would make two nodes share a unique key."""


@dataclass
class Node:
    key: int
    labels: frozenset[str]
    props: dict[str, Any]
    # Relationship keys by type, so that one type of a node with thousands of another (an entity's MENTIONS) is
    # found without reading the rest.
    out: dict[str, set[int]] = field(default_factory=dict)
    into: dict[str, set[int]] = field(default_factory=dict)


@dataclass
class Rel:
    key: int
    type: str
    start: int
    end: int
    props: dict[str, Any]


class PropertyGraph:
    def __init__(self) -> None:
        self.nodes: dict[int, Node] = {}
        self.rels: dict[int, Rel] = {}
        self.next_key = 1
        self._by_label: dict[str, set[int]] = {}
        self._by_tenant: dict[tuple[str, Any], set[int]] = {}  # (label, tenant) → node keys
        self._by_session: dict[tuple[str, Any, Any], set[int]] = {}  # (label, tenant, session) → node keys
        self._by_value: dict[tuple[str, Any], set[int]] = {}  # (label, value of its VALUE_KEYS property) → node keys
        self._unique: dict[tuple[str, tuple[str, ...]], dict[tuple[Any, ...], int]] = {u: {} for u in UNIQUE}
        self._journal: list[tuple[Op, Callable[[], None]]] | None = None
        self.touched: set[int] = set()  # nodes changed since the derived indexes last caught up
        self.vector_versions: dict[tuple[str, Any], int] = {}  # (label, tenant) → changes to its embeddings
        self.on_commit: Callable[[list[Op]], None] | None = None

    # -- reading ----------------------------------------------------------------------------------

    def labelled(self, label: str, tenant: Any = None) -> Iterator[Node]:
        """Nodes with `label` (of one tenant when given)."""
        keys = self._by_label.get(label, ()) if tenant is None else self._by_tenant.get((label, tenant), ())
        return (self.nodes[k] for k in list(keys))

    def labels(self) -> list[str]:
        """Every label a node has now or had."""
        return list(self._by_label)

    def in_session(self, label: str, tenant: Any, session: Any) -> list[Node]:
        """A tenant's notes of a `session` (or pages of a `session_id`), in no order."""
        return [self.nodes[k] for k in self._by_session.get((label, tenant, session), ())]

    def having(self, label: str, value: Any) -> list[Node]:
        """Nodes with `label` whose VALUE_KEYS property is `value` (notes whose analysis is pending)."""
        return [self.nodes[k] for k in self._by_value.get((label, value), ())]

    def unique(self, label: str, **props: Any) -> Node | None:
        """The node a unique key names, e.g. unique("Note", id="n1")."""
        index = self._unique[(label, tuple(props))]
        key = index.get(tuple(props.values()))
        return None if key is None else self.nodes[key]

    def relationships(self, node: Node, types: Iterable[str] | None = None, direction: str = "out") -> Iterator[Rel]:
        sides = (node.out,) if direction == "out" else (node.into,) if direction == "in" else (node.out, node.into)
        wanted = None if types is None else tuple(types)  # read once: each side reads it
        kinds = [(side, kind) for side in sides for kind in (list(side) if wanted is None else wanted)]
        keys = dict.fromkeys(key for side, kind in kinds for key in side.get(kind, ()))  # once each, a loop too
        for key in keys:
            yield self.rels[key]

    def other(self, rel: Rel, node: Node) -> Node:
        return self.nodes[rel.end if rel.start == node.key else rel.start]

    # -- writing ----------------------------------------------------------------------------------

    def create_node(self, labels: Iterable[str], props: dict[str, Any], key: int | None = None) -> Node:
        node = Node(key or self.next_key, frozenset(labels), {k: v for k, v in props.items() if v is not None})
        self._check_unique(node, node.props)
        self._record(["node", node.key, sorted(node.labels), dict(node.props)], lambda: self._drop_node(node))
        self.next_key = max(self.next_key, node.key + 1)
        self._put_node(node)
        return node

    def set(self, node: Node, **props: Any) -> None:
        """Set properties (None removes one), checking unique keys first."""
        self._check_unique(node, {**node.props, **props})
        old = {k: node.props.get(k) for k in props}
        self._record(["set", node.key, props], lambda: self._reassign(node, old))
        self._reassign(node, props)

    def set_rel(self, rel: Rel, **props: Any) -> None:
        old = {k: rel.props.get(k) for k in props}
        self._record(["set_rel", rel.key, props], lambda: self._assign(rel.props, old))
        self._assign(rel.props, props)

    def create_rel(self, type: str, start: Node, end: Node, props: dict[str, Any] | None = None,
                   key: int | None = None) -> Rel:
        rel = Rel(key or self.next_key, type, start.key, end.key, {k: v for k, v in (props or {}).items() if v is not None})
        self.next_key = max(self.next_key, rel.key + 1)
        self._put_rel(rel)
        self._record(["rel", rel.key, type, start.key, end.key, dict(rel.props)], lambda: self._drop_rel(rel))
        return rel

    def delete_rel(self, rel: Rel) -> None:
        self._drop_rel(rel)
        self._record(["del_rel", rel.key], lambda: self._put_rel(rel))

    def delete_node(self, node: Node) -> None:
        """Delete a node with its relationships (DETACH DELETE)."""
        for rel in list(self.relationships(node, direction="both")):
            self.delete_rel(rel)
        self._drop_node(node)
        self._record(["del", node.key], lambda: self._put_node(node))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing: an exception inside, or a failure to journal the changes, undoes every change
        made in it. Not re-entrant by design: the store opens one per operation."""
        if self._journal is not None:
            raise RuntimeError("a transaction is already open")
        self._journal = []
        try:
            yield
            if self._journal and self.on_commit is not None:
                self.on_commit([op for op, _ in self._journal])  # not on disk: not committed, undone below
        except BaseException:
            for _, undo in reversed(self._journal):
                undo()
            raise
        finally:
            self._journal = None

    # -- replay (loading a saved graph) -------------------------------------------------------------

    def apply(self, op: Op) -> None:
        """Redo one journaled operation (outside a transaction: loading never undoes)."""
        kind = op[0]
        if kind == "node":
            self.create_node(op[2], op[3], key=op[1])
        elif kind == "set":
            self.set(self.nodes[op[1]], **op[2])
        elif kind == "set_rel":
            self.set_rel(self.rels[op[1]], **op[2])
        elif kind == "rel":
            self.create_rel(op[2], self.nodes[op[3]], self.nodes[op[4]], op[5], key=op[1])
        elif kind == "del_rel":
            self.delete_rel(self.rels[op[1]])
        elif kind == "del":
            self.delete_node(self.nodes[op[1]])
        else:
            raise ValueError(f"unknown graph operation {kind!r}")

    # -- internals --------------------------------------------------------------------------------

    def _record(self, op: Op, undo: Callable[[], None]) -> None:
        if self._journal is not None:
            self._journal.append((op, undo))

    @staticmethod
    def _assign(props: dict[str, Any], changes: dict[str, Any]) -> None:
        for name, value in changes.items():
            if value is None:
                props.pop(name, None)
            else:
                props[name] = value

    def _check_unique(self, node: Node, props: dict[str, Any]) -> None:
        for (label, names), index in self._unique.items():
            if label in node.labels and all(props.get(n) is not None for n in names):
                holder = index.get(tuple(props[n] for n in names))
                if holder is not None and holder != node.key:
                    raise ConstraintViolation(f"{label} with {dict(zip(names, (props[n] for n in names)))} already exists")

    def _index(self, node: Node, *, add: bool) -> None:
        self.touched.add(node.key)
        for label in node.labels:
            keys = [self._by_label.setdefault(label, set())]
            if "tenant" in node.props:
                keys.append(self._by_tenant.setdefault((label, node.props["tenant"]), set()))
                session = node.props.get(SESSION_KEYS.get(label, ""))
                if session is not None:
                    keys.append(self._by_session.setdefault((label, node.props["tenant"], session), set()))
            if label in VALUE_KEYS and (value := node.props.get(VALUE_KEYS[label])) is not None:
                keys.append(self._by_value.setdefault((label, value), set()))
            for bucket in keys:
                (bucket.add if add else bucket.discard)(node.key)
        for (label, names), index in self._unique.items():
            if label in node.labels and all(node.props.get(n) is not None for n in names):
                value = tuple(node.props[n] for n in names)
                if add:
                    index[value] = node.key
                elif index.get(value) == node.key:
                    del index[value]

    def _vectors_changed(self, node: Node) -> None:
        """A node with an embedding came, went or got a new one: cached matrices of its tenant are stale."""
        for label in node.labels:
            key = (label, node.props.get("tenant"))
            self.vector_versions[key] = self.vector_versions.get(key, 0) + 1

    def _drop_node(self, node: Node) -> None:
        self._index(node, add=False)
        self._vectors_changed(node)
        self.nodes.pop(node.key, None)

    def _reassign(self, node: Node, changes: dict[str, Any]) -> None:
        """Change a node's properties (or put back the old ones), keeping the indexes in step."""
        self._index(node, add=False)
        self._assign(node.props, changes)
        self._index(node, add=True)
        if "embedding" in changes or "tenant" in changes:
            self._vectors_changed(node)

    def _put_node(self, node: Node) -> None:
        self.nodes[node.key] = node
        self._index(node, add=True)
        self._vectors_changed(node)

    def _drop_rel(self, rel: Rel) -> None:
        for side in (self.nodes[rel.start].out, self.nodes[rel.end].into):
            keys = side[rel.type]
            keys.discard(rel.key)
            if not keys:
                del side[rel.type]
        del self.rels[rel.key]

    def _put_rel(self, rel: Rel) -> None:
        self.rels[rel.key] = rel
        self.nodes[rel.start].out.setdefault(rel.type, set()).add(rel.key)
        self.nodes[rel.end].into.setdefault(rel.type, set()).add(rel.key)
