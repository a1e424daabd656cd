"""The note primitives in the embedded store: each does what its statement in cypher/ does on Neo4j, inside
the store's all-or-nothing transaction (a write) or under its lock (a read)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from ...core import validation
from ...errors import InvalidInput
from ...models import (
    EVERY_NOTE,
    LINK_TYPES,
    NO_FILTER,
    Evolution,
    Link,
    Note,
    RetentionPolicy,
    SearchFilter,
    Step,
    Supersession,
    in_periods,
)
from ..base import EVERY, Counted, EvolutionRecord, History, NoteRevision, NoteUsage, Placed
from ..bm25 import Statistics
from ..lucene import TEXT_FIELDS, check_fields, query_words
from ..records import evolution_from_record, link_periods, version_from_record
from .fulltext import best
from .graph import ConstraintViolation, Node, Rel
from .view import StoreView

_COUNTED = {"Note": ("retrieval_count", "last_accessed"), "Segment": ("visits", "last_access"),
            "Fact": ("uses", "last_used")}
EXPANDED = ("NEXT", *sorted(LINK_TYPES))  # what expansion may follow (search/expand.cypher)
_VERSION_FIELDS = ("content", "context", "keywords", "tags", "category", "importance", "event_time", "analysis",
                   "model", "neighbourhood")


def _stored(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


class EmbeddedNotes:
    """Note primitives over the store's graph for one tenant."""

    # The attachments' reader (attached.py), on the same transaction: `history` hands on to it.
    _earlier_attachments: Callable[[Sequence[str]], dict[str, list[tuple[str, datetime]]]]

    def __init__(self, store: StoreView, tenant: str, now: datetime) -> None:
        self._store = store
        self.graph = store.graph
        self.tenant = tenant
        self.now = now

    def _note(self, note_id: str) -> Node | None:
        return self._store.note_node(self.tenant, note_id)

    def _id(self, key: int) -> str:
        return self.graph.nodes[key].props["id"]

    # -- notes ------------------------------------------------------------------------------------

    def create_notes(self, rows: Sequence[dict[str, Any]]) -> list[tuple[str, bool]]:
        try:
            return [self._create(row) for row in rows]
        except ConstraintViolation as err:
            raise InvalidInput(f"a note id is already taken: {err}") from None

    def _create(self, row: dict[str, Any]) -> tuple[str, bool]:
        """cypher/note/create.cypher for one row."""
        found = self.graph.unique("Note", tenant=self.tenant, source=row["source"], content_hash=row["content_hash"])
        if found is not None:
            return found.props["id"], False
        props = {
            **{k: row[k] for k in ("id", "content", "content_hash", "source", "keywords", "tags", "context", "category",
                                   "importance", "event_time", "analysis", "model", "speaker", "neighbourhood")},
            **{k: row[k] for k in ("addressee", "called", "extracted", "given") if row.get(k) is not None},
            "tenant": self.tenant, "retrieval_count": 0, "created_at": self.now, "updated_at": self.now, "version": 1,
            "valid_from": row["event_time"] or self.now, "embedding": np.asarray(row["embedding"], dtype=np.float32),
        }
        node = self.graph.create_node(["Note"], props)
        self._add_passages(node, row["passages"])
        if row["session"] is not None:
            chained = [n for n in self.graph.in_session("Note", self.tenant, row["session"]) if n.props.get("seq") is not None]
            last = max(chained, key=lambda n: n.props["seq"], default=None)
            self.graph.set(node, session=row["session"], seq=(last.props["seq"] if last else 0) + 1)
            if last is not None:
                self.graph.create_rel("NEXT", last, node)
        return props["id"], True

    def _add_passages(self, node: Node, rows: Sequence[Mapping[str, Any]]) -> None:
        """The passages of cypher/note/create.cypher and revise.cypher."""
        for row in rows:
            passage = self.graph.create_node(["Passage"], {
                "id": row["id"], "tenant": self.tenant, "start": row["start"], "end": row["end"],
                "embedding": np.asarray(row["embedding"], dtype=np.float32),
            })
            self.graph.create_rel("HAS_PASSAGE", node, passage)

    def _passages_of(self, node: Node) -> list[Node]:
        return [self.graph.nodes[r.end] for r in self.graph.relationships(node, ["HAS_PASSAGE"])]

    def notes(
        self, *, ids: Sequence[str] | None = None, keys: Sequence[tuple[str, str]] | None = None,
        session: str | None = None, analyses: Sequence[str] | None = None, limit: int = EVERY, offset: int = 0,
        links: bool = False, with_embedding: bool = False, filters: SearchFilter | None = None,
    ) -> list[Note]:
        """cypher/note/get, existing, session_tail, by_analysis and list.cypher."""
        if ids is not None:
            found = [n for i in ids if (n := self._note(i)) is not None]
            return [self._store.to_note(n, links=links, with_embedding=with_embedding) for n in found]
        if keys is not None:
            found = [self.graph.unique("Note", tenant=self.tenant, source=s, content_hash=h) for s, h in keys]
            nodes = [n for n in found if n is not None]
        elif session is not None:
            nodes = [n for n in self.graph.in_session("Note", self.tenant, session) if n.props.get("seq") is not None]
            nodes = sorted(nodes, key=lambda n: n.props["seq"])[-limit:] if limit > 0 else []
        elif analyses is not None:
            nodes = [n for n in self.graph.labelled("Note", self.tenant)
                     if n.props.get("analysis") in analyses and n.props.get("invalid_at") is None]
            nodes = sorted(nodes, key=lambda n: (n.props["created_at"], n.props["id"]))[:limit]
        else:
            admits = (filters or EVERY_NOTE).admits
            nodes = sorted((n for n in self.graph.labelled("Note", self.tenant) if admits(n.props)),
                           key=lambda n: n.props["id"])
            nodes.sort(key=lambda n: n.props["created_at"], reverse=True)
            nodes = nodes[offset: offset + limit]
        return [self._store.to_note(n) for n in nodes]

    def _revise(self, revisions: Sequence[NoteRevision], evolution_id: str | None) -> list[tuple[str, int]]:
        kept = []
        for revision in revisions:
            node = self._note(revision.id)
            if node is None:
                continue
            if not revision.versioned:  # cypher/note/refresh.cypher
                after = node.props.get("neighbourhood_after")
                if revision.values.get("neighbourhood") is not None:
                    after = [*(after or ()), self.now]
                self.graph.set(node, **_stored(revision.values), neighbourhood_after=after)
                continue
            version = self._keep_version(node, reason=revision.reason, evolution_id=evolution_id)
            values = _stored(revision.values)
            if revision.embedding is not None:
                values["embedding"] = np.asarray(revision.embedding, dtype=np.float32)
            try:
                self.graph.set(node, **values, version=node.props["version"] + 1, updated_at=self.now)
            except ConstraintViolation:
                raise InvalidInput(
                    f"another note in tenant {self.tenant!r} already has this content from the same source"
                ) from None
            if revision.passages is not None:
                for passage in self._passages_of(node):
                    self.graph.delete_node(passage)
                self._add_passages(node, revision.passages)
            kept.append((revision.id, int(version.props["version"])))
        return kept

    def _keep_version(self, node: Node, **extra: Any) -> Node:
        """cypher/fragments/version_props.cypher: the note as it is before a change."""
        props = {"note_id": node.props["id"], "tenant": node.props["tenant"], "version": node.props["version"],
                 **{k: node.props.get(k) for k in _VERSION_FIELDS},
                 "valid_from": node.props.get("updated_at"), "valid_to": self.now, **extra}
        version = self.graph.create_node(["NoteVersion"], props)
        self.graph.create_rel("HAS_VERSION", node, version)
        return version

    def delete_note(
        self, note_id: str, *, erase: tuple[str, tuple[str, ...], datetime | None] | None = None,
    ) -> list[str] | None:
        """cypher/note/delete.cypher, then cypher/note/erase_text.cypher for each line."""
        restored = self._delete(note_id)
        if restored is not None and erase is not None:
            session, lines, joined = erase
            for line in lines:
                self._erase_text(session, line, joined)
        return restored

    def _delete(self, note_id: str) -> list[str] | None:
        graph, node = self.graph, self._note(note_id)
        if node is None:
            return None
        versions = [graph.other(r, node) for r in graph.relationships(node, ["HAS_VERSION"])] + self._passages_of(node)
        evolutions = [
            graph.other(r, node) for r in graph.relationships(node, ["TRIGGERED_BY"], "in")
            if all(graph.other(v, graph.other(r, node)).props.get("note_id") == note_id
                   for v in graph.relationships(graph.other(r, node), ["REVISED"]))
        ]
        restored = [
            older for older in (graph.nodes[r.start] for r in graph.relationships(node, ["SUPERSEDED_BY"], "in"))
            if all(graph.nodes[s.end].key == node.key for s in graph.relationships(older, ["SUPERSEDED_BY"]))
        ]
        mentioned = [graph.nodes[r.end] for r in graph.relationships(node, ["MENTIONS"])]
        before = [graph.nodes[r.start] for r in graph.relationships(node, ["NEXT"], "in")]
        after = [graph.nodes[r.end] for r in graph.relationships(node, ["NEXT"], "out")]
        for b in before:
            for a in after:
                graph.create_rel("NEXT", b, a)
        graph.delete_node(node)
        for doomed in (*versions, *evolutions):
            if doomed.key in graph.nodes:
                graph.delete_node(doomed)
        for older in restored:
            graph.set(older, invalid_at=None, valid_to=None)
        for entity in mentioned:
            if entity.props["mentions"] > 1:
                graph.set(entity, mentions=entity.props["mentions"] - 1)
            else:
                graph.delete_node(entity)
        return [older.props["id"] for older in restored]

    def _erase_text(self, session: str, line: str, joined: datetime | None) -> None:
        graph = self.graph
        notes = list(graph.in_session("Note", self.tenant, session))
        for note in notes:
            after = note.props.get("neighbourhood_after") or []
            if joined in after:
                graph.set(note, neighbourhood_after=[bound for bound in after if bound != joined])
        holders = notes + [graph.other(r, n) for n in notes for r in graph.relationships(n, ["HAS_VERSION"])]
        for holder in holders:
            text = holder.props.get("neighbourhood")
            if isinstance(text, str) and line in text:
                graph.set(holder, neighbourhood=text.replace("\n" + line, "").replace(line + "\n", "").replace(line, ""))

    # -- links and evolutions ---------------------------------------------------------------------

    def _link(self, links: Sequence[Link], evolution_id: str | None, invalidate: str | None) -> list[Link]:
        """cypher/link/create.cypher; with `invalidate`, cypher/link/invalidate.cypher."""
        if invalidate is not None:
            self._invalidate(links, invalidate, evolution_id)
            return []
        made = []
        for link in links:
            a, b = self._note(link.source_id), self._note(link.target_id)
            if a is None or b is None:
                continue
            kind = validation.link_type(link.type)
            rel = next((r for r in self.graph.relationships(a, [kind]) if r.end == b.key), None)
            if rel is None:
                rel = self.graph.create_rel(kind, a, b, {"created_at": self.now, "periods": [self.now]})
            periods = [*link_periods(rel.props), *([self.now] if rel.props.get("invalid_at") is not None else [])]
            self.graph.set_rel(rel, periods=periods, reason=link.reason, confidence=link.confidence,
                               evolution_id=evolution_id, invalid_at=None, invalid_reason=None, invalidated_by=None)
            made.append(Link(link.source_id, link.target_id, kind, rel.props.get("reason") or "",
                             float(rel.props.get("confidence", 1.0)), rel.props.get("created_at"), None, tuple(periods)))
        return made

    def _supersede(self, pairs: Sequence[tuple[str, str, str]], evolution_id: str | None) -> None:
        """cypher/evolution/supersede.cypher."""
        for old_id, new_id, reason in pairs:
            old, new = self._note(old_id), self._note(new_id)
            if old is None or new is None:
                continue
            if old.props.get("invalid_at") is None:
                began, ends = old.props.get("valid_from"), new.props.get("valid_from")
                later = began is not None and ends is not None and ends < began  # as the statement's CASE
                self.graph.set(old, invalid_at=self.now, valid_to=began if later else ends)
            if not any(r.end == new.key for r in self.graph.relationships(old, ["SUPERSEDED_BY"])):
                self.graph.create_rel("SUPERSEDED_BY", old, new, {"reason": reason, "at": self.now,
                                                                  "evolution_id": evolution_id})

    def _invalidate(self, links: Sequence[Link], reason: str, evolution_id: str | None) -> None:
        for link in links:
            source, target = self._note(link.source_id), self._note(link.target_id)
            if source is None or target is None:
                continue
            for rel in self.graph.relationships(source, [link.type]):
                if rel.end == target.key and rel.props.get("invalid_at") is None:
                    self.graph.set_rel(rel, periods=[*link_periods(rel.props), self.now], invalid_at=self.now,
                                       invalid_reason=reason, invalidated_by=evolution_id)

    def _record_evolution(self, record: EvolutionRecord) -> None:
        """cypher/evolution/record.cypher."""
        trigger = self._note(record.trigger_id)
        if trigger is None:
            return
        evolution = self.graph.create_node(["Evolution"], {
            "id": record.id, "tenant": self.tenant, "at": self.now, "trigger_note_id": record.trigger_id,
            "analysis": record.analysis, "model": record.model, "prompt_version": record.prompt_version,
            "decision": record.decision, "prompt_tokens": record.prompt_tokens,
            "completion_tokens": record.completion_tokens,
        })
        self.graph.create_rel("TRIGGERED_BY", evolution, trigger)
        for note_id, version in record.revised:
            note = self._note(note_id)
            for rel in self.graph.relationships(note, ["HAS_VERSION"]) if note else ():
                if self.graph.nodes[rel.end].props.get("version") == version:
                    self.graph.create_rel("REVISED", evolution, self.graph.nodes[rel.end])

    def archive(self, note_ids: Sequence[str], archive: bool = True) -> list[str]:
        """cypher/note/archive.cypher."""
        changed = []
        for note_id in note_ids:
            node = self._note(note_id)
            if node is not None and (node.props.get("archived_at") is None) == archive:
                self.graph.set(node, archived_periods=[*(node.props.get("archived_periods") or ()), self.now],
                               archived_at=self.now if archive else None)
                changed.append(note_id)
        return changed

    def usage(self) -> list[NoteUsage]:
        """cypher/note/usage.cypher."""
        graph = self.graph
        nodes = sorted((n for n in graph.labelled("Note", self.tenant) if n.props.get("archived_at") is None),
                       key=lambda n: n.props["id"])
        return [NoteUsage(
            n.props["id"], n.props.get("created_at"), n.props.get("last_accessed"), n.props.get("retrieval_count", 0),
            sum(1 for r in graph.relationships(n, LINK_TYPES, "both")
                if r.props.get("invalid_at") is None and "Note" in graph.other(r, n).labels),
        ) for n in nodes]

    def retention(self, policy: RetentionPolicy | None = None) -> RetentionPolicy | None:
        """cypher/tenant/retention.cypher; with `policy`, cypher/tenant/set_retention.cypher first."""
        if policy is not None:
            self._set_retention(policy)
        node = self.graph.unique("Retention", tenant=self.tenant)
        if node is None:
            return None
        return RetentionPolicy(**{k: node.props.get(k) for k in ("max_notes", "unused_days", "min_heat")})

    def _set_retention(self, policy: RetentionPolicy) -> None:
        node = self.graph.unique("Retention", tenant=self.tenant)
        if policy == RetentionPolicy():
            if node is not None:
                self.graph.delete_node(node)
            return
        values = {**policy.to_dict(), "set_at": self.now}
        if node is None:
            self.graph.create_node(["Retention"], {"tenant": self.tenant, **values})
        else:
            self.graph.set(node, **values)

    def _kept(self, node: Node) -> list[Node]:
        return sorted((self.graph.nodes[r.end] for r in self.graph.relationships(node, ["HAS_VERSION"])),
                      key=lambda v: v.props["version"])

    def history(self, note_ids: Sequence[str], *, full: bool = False, attachments: bool = False) -> History:
        """cypher/history/versions.cypher; with `full`, evolutions.cypher and superseded_by.cypher; with
        `attachments`, cypher/attached/history.cypher."""
        found = {note_id: self._kept(node) for note_id in note_ids if (node := self._note(note_id)) is not None}
        versions = {note_id: [version_from_record(v.props) for v in kept] for note_id, kept in found.items() if kept}
        attached = self._earlier_attachments(note_ids) if attachments else {}
        if not full:
            return History(versions, attached=attached)
        events = {note_id: self._events(note_id) for note_id in found}
        return History(versions, {i: e for i, (e, _) in events.items() if e}, {i: s for i, (_, s) in events.items() if s},
                       attached)

    def _events(self, note_id: str) -> tuple[list[Evolution], list[Supersession]]:
        """The evolutions a note triggered or that revised it, and the newer notes that superseded it."""
        graph, node = self.graph, self._note(note_id)
        if node is None:
            return [], []
        kept = self._kept(node)
        found = {e.key: e for e in graph.labelled("Evolution", self.tenant) if e.props.get("trigger_note_id") == note_id}
        for version in kept:
            for revised in graph.relationships(version, ["REVISED"], "in"):
                found[revised.start] = graph.nodes[revised.start]
        evolutions = []
        for e in sorted(found.values(), key=lambda e: (e.props["at"], e.props["id"])):
            versions = [graph.nodes[r.end].props for r in graph.relationships(e, ["REVISED"])]
            evolutions.append(evolution_from_record(e.props, [(v["note_id"], v["version"]) for v in versions]))
        rels = sorted(graph.relationships(node, ["SUPERSEDED_BY"]), key=lambda r: r.props["at"])
        superseded = [Supersession(self._id(r.end), r.props.get("reason") or "", r.props.get("at")) for r in rels]
        return evolutions, superseded

    # -- search -----------------------------------------------------------------------------------

    def schema_marker(self) -> dict[str, Any]:
        marker = self.graph.unique("AmemSchema", name="amem-graph")
        return dict(marker.props) if marker is not None else {}

    def _nearest_notes(
        self, vector: Sequence[float], k: int, filters: SearchFilter, brief: bool
    ) -> list[tuple[Note, float]]:
        query = np.asarray(vector, dtype=np.float32)
        keys, matrix = self._store.vectors("Note", self.tenant)
        if not keys:
            return []
        scores = (1.0 + matrix @ (query / (np.linalg.norm(query) + 1e-12))) / 2.0  # as Neo4j's: in [0, 1]
        found = []
        for i in np.argsort(-scores, kind="stable"):  # ties in id order, as the matrix rows are
            node = self.graph.nodes.get(keys[i])
            if node is not None and filters.admits(node.props):
                found.append((self._store.to_note(node), float(scores[i])))
                if len(found) == k:
                    break
        return found

    def _nearest_passages(
        self, vector: Sequence[float], k: int, filters: SearchFilter, brief: bool
    ) -> list[tuple[Note, float, int, int]]:
        keys, matrix = self._store.vectors("Passage", self.tenant)
        if not keys:
            return []
        query = np.asarray(vector, dtype=np.float32)
        scores = (1.0 + matrix @ (query / (np.linalg.norm(query) + 1e-12))) / 2.0
        found: dict[str, tuple[Note, float, int, int]] = {}  # note id → its best passage (scores fall)
        for i in np.argsort(-scores, kind="stable"):
            passage = self.graph.nodes.get(keys[i])
            if passage is None:
                continue
            for rel in self.graph.relationships(passage, ["HAS_PASSAGE"], "in"):
                node = self.graph.nodes[rel.start]
                if node.props["id"] not in found and filters.admits(node.props):
                    span = (passage.props["start"], passage.props["end"])
                    found[node.props["id"]] = (self._store.to_note(node), float(scores[i]), *span)
            if len(found) >= k:
                break
        return list(found.values())[:k]

    def _note_bm25(
        self, query: str, k: int, filters: SearchFilter, fields: Mapping[str, float] | None, brief: bool
    ) -> list[tuple[Note, float]]:
        check_fields(fields, TEXT_FIELDS)
        words = query_words(query)
        if not words:
            return []
        scores = self._store.note_scores(self.tenant, words, fields)
        found = best(((key, score) for key, score in scores.items() if filters.admits(self.graph.nodes[key].props)),
                     k, lambda key: self.graph.nodes[key].props["id"])
        return [(self._store.to_note(self.graph.nodes[key]), float(score)) for key, score in found]

    def expand(
        self, candidates: Mapping[str, float], seeds: Sequence[str], *, hops: int, decay: float,
        weights: Mapping[str, float], limit: int, names: Sequence[str] = (), speaker_prior: float = 0.0,
        deep_seeds: int = 5, filters: SearchFilter = NO_FILTER,
    ) -> list[tuple[Note, float, list[Step]]]:
        """cypher/search/expand.cypher."""
        followed = {t: float(w) for t, w in weights.items() if w > 0 and t in EXPANDED}
        best: dict[int, tuple[float, tuple[tuple[Node, Rel], ...]]] = {}
        for note_id, score in candidates.items():
            node = self._note(note_id)
            if node is not None and (node.key not in best or score > best[node.key][0]):
                best[node.key] = (score, ())
        seed_ids = set(seeds)
        for rank, seed_id in enumerate(seeds):
            seed = self._note(seed_id)
            if seed is None:
                continue
            depth = hops if rank < deep_seeds else min(hops, 1)
            for node, factor, steps in self._paths(seed, depth, decay, followed, filters.as_of):
                if node.props["id"] in seed_ids or not filters.admits(node.props):
                    continue
                prior = speaker_prior if node.props.get("speaker") in names else 0.0
                score = candidates[seed_id] * factor + prior
                if node.key not in best or score > best[node.key][0]:
                    best[node.key] = (score, steps)
        ranked = sorted(best.items(), key=lambda item: (-item[1][0], self._id(item[0])))[:limit]
        return [(self._store.to_note(self.graph.nodes[key]), score, [_step(n, r) for n, r in path])
                for key, (score, path) in ranked]

    def _paths(
        self, seed: Node, depth: int, decay: float, weights: Mapping[str, float], as_of: datetime | None,
    ) -> Iterator[tuple[Node, float, tuple[tuple[Node, Rel], ...]]]:
        """Every path of 1..depth valid (at `as_of` if given), followed relationships from `seed` (no relationship
        twice, as Cypher's patterns), with its factor: per step decay × weight × confidence. A path is its (node,
        relationship) steps; only the paths of the final notes become Steps."""
        stack: list[tuple[Node, float, tuple[tuple[Node, Rel], ...]]] = [(seed, 1.0, ())]
        while stack:
            node, factor, path = stack.pop()
            if len(path) == depth:
                continue
            for rel in self.graph.relationships(node, weights, "both"):
                # search's hot path: the plain check inline, the as-of one (rarer) in a function
                valid = rel.props.get("invalid_at") is None if as_of is None else _valid_then(rel, as_of)
                if not valid or any(rel is used for _, used in path):
                    continue
                nxt = self.graph.other(rel, node)
                if "Note" not in nxt.labels:
                    continue
                gained = factor * decay * weights[rel.type] * float(rel.props.get("confidence", 1.0))
                longer = (*path, (node, rel))
                yield nxt, gained, longer
                stack.append((nxt, gained, longer))

    def statistics(self, index: str) -> Statistics:
        """cypher/terms/statistics.cypher."""
        return self._store.statistics(index, self.tenant)

    def placed(self, filters: SearchFilter) -> list[Placed]:
        """cypher/note/placed.cypher."""
        graph = self.graph
        return [
            Placed(p["id"], p.get("session"), p.get("seq"), p.get("event_time"), p["created_at"], p.get("updated_at"),
                   p.get("invalid_at"), tuple(p.get("archived_periods") or ()),
                   tuple(graph.nodes[r.end].props["key"] for r in graph.relationships(node, ["MENTIONS"])))
            for node in graph.labelled("Note", self.tenant)
            if (p := node.props).get("created_at") is not None and filters.admits(p)
        ]

    def speakers(self, *, calls: bool = False) -> tuple[list[str], list[tuple[str, str, int]]]:
        """cypher/search/speakers.cypher; with `calls`, cypher/search/speaker_calls.cypher."""
        notes = list(self.graph.labelled("Note", self.tenant))
        names = sorted({s for n in notes if (s := n.props.get("speaker"))})
        if not calls:
            return names, []
        counted = Counter((n.props["addressee"], n.props["called"]) for n in notes if n.props.get("called") is not None)
        return names, [(speaker, name, times) for (speaker, name), times in sorted(counted.items())]


    def update(self, label: Counted, changes: Sequence[tuple[str, Mapping[str, Any]]] = (), *,
               used: Sequence[str] = (), now: datetime | None = None) -> None:
        """cypher/segment/update.cypher, persona/update.cypher; with `used`, search/record_access.cypher,
        segment/visit.cypher, persona/used.cypher."""
        if changes and label == "Note":
            raise ValueError(f"update sets properties of segments or facts, not of a {label}")
        for item_id, values in changes:
            node = self.graph.unique(label, id=item_id)
            if node is not None and node.props.get("tenant") == self.tenant:
                self.graph.set(node, **_stored(values))
        counter, stamp = _COUNTED[label]
        for item_id in used:
            node = self.graph.unique(label, id=item_id)
            if node is not None and node.props.get("tenant") == self.tenant:
                self.graph.set(node, **{counter: node.props.get(counter, 0) + 1, stamp: now})


def _valid_then(rel: Rel, as_of: datetime) -> bool:
    """Whether an as-of expansion may follow `rel` (search/expand.cypher): valid at `as_of` (a session step always)."""
    return rel.type == "NEXT" or in_periods(link_periods(rel.props), as_of)


def _step(node: Node, rel: Rel) -> Step:
    """One step of a path as the caller sees it: from `node` along `rel` (NEXT walked back is PREVIOUS)."""
    kind = "PREVIOUS" if rel.type == "NEXT" and rel.start != node.key else rel.type
    return Step(from_id=node.props["id"], type=kind, reason=rel.props.get("reason") or "",
                confidence=float(rel.props.get("confidence", 1.0)))


__all__ = ["EmbeddedNotes"]
