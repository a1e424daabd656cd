"""The note primitives on Neo4j: each one named statement (or a few) inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from neo4j import ManagedTransaction, Record
from neo4j.exceptions import ConstraintError

from ..core import validation
from ..errors import InvalidInput
from ..models import (
    EVERY_NOTE,
    LINK_TYPES,
    NO_FILTER,
    Evolution,
    Link,
    Note,
    NoteVersion,
    RetentionPolicy,
    SearchFilter,
    Step,
    Supersession,
)
from . import cypher
from .base import EVERY, Counted, EvolutionRecord, History, NoteRevision, NoteUsage, Placed
from .bm25 import Statistics, boosts_of, query_terms
from .lucene import TEXT_FIELDS, lucene_query, query_words
from .neo4j_text import INDEXES, RESCORED, Neo4jText, documents, rescored
from .records import (
    brief_note,
    evolution_from_record,
    link_from_record,
    note_from_record,
    time_of,
    version_from_record,
)
from .upgrade import folding

_COUNTED = {"Note": "search/record_access", "Segment": "segment/visit", "Fact": "persona/used"}
_UPDATED = {"Segment": "segment/update", "Fact": "persona/update"}
MAX_FETCH = 20_000  # the most notes one k-NN query asks the shared vector index for
OVERFETCH_MEMORY = 0.95  # per query, how much of the widest recent over-fetch multiple is kept
# Candidates a k-NN query asks of the index, at least: an HNSW search explores the graph as widely as the
# candidates it keeps, so a limit of k alone misses some of the k nearest. A shared index's floor was chosen with
# `amem-graph bench scale` (recall@10 against the exact answer beside p95; BENCHMARKS-HISTORY.md, "Warm first
# calls, k-NN recall, long notes"); an index that filters by tenant itself explores less of the graph per
# candidate and needs more (BENCHMARKS-HISTORY.md, "Scale").
MIN_FETCH = 30
FILTERED_MIN_FETCH = 100
# A tenant's passages up to this many are scanned exactly (an index over-fetch would mostly return other
# tenants' and end in the scan anyway); past it the scan reads every passage's vector and costs more than the
# index. Most tenants hold none or few (only notes longer than the model's window have passages).
EXACT_PASSAGES = 100
# A tenant of up to this many notes is searched by an exact scan, no dearer than the shared index at this size:
# its answer cannot depend on other tenants' vectors, as the index's can (a larger tenant's depends on them only
# within the index's recall, which `amem-graph bench scale` measures). A tenant once seen past it stays on the
# index in this process: the count is not asked again.
EXACT_NOTES = 200


def _note(props: dict[str, Any], brief: bool) -> Note:
    return brief_note(props) if brief else note_from_record(props)


def _link_row(link: Link) -> dict[str, Any]:
    return {
        "source_id": link.source_id, "target_id": link.target_id, "type": validation.link_type(link.type),
        "reason": link.reason, "confidence": link.confidence,
    }


@dataclass
class KnnState:
    """What a store learns about its vector index and keeps between queries."""

    overfetch: dict[tuple[str, str, bool], float] = field(default_factory=dict)  # (statement, tenant, filtered) → multiple
    tenant_in_index: bool = False  # the index filters by tenant itself (Neo4j 2026.01+: note/vector_search.25)
    large: set[str] = field(default_factory=set)  # tenants seen holding more than EXACT_NOTES notes (no count asked again)


def min_candidates(knn: KnnState) -> int:
    return FILTERED_MIN_FETCH if knn.tenant_in_index else MIN_FETCH


class Neo4jNotes(Neo4jText):
    """Note primitives over one managed transaction, every statement scoped by the tenant; each write that changes
    a note's text moves the tenant's BM25 statistics with it (neo4j_text.py)."""

    # The attachments' reader (neo4j_attached.py), on the same transaction: `history` hands on to it.
    _earlier_attachments: Callable[[Sequence[str]], dict[str, list[tuple[str, datetime]]]]

    def __init__(self, tx: ManagedTransaction, tenant: str, now: datetime, knn: KnnState) -> None:
        self._tx = tx
        self.tenant = tenant
        self.now = now
        self._knn = knn  # the store's
        self._overfetch = knn.overfetch
        self._pending = {}

    def run(self, name: str, *, dialect: str | None = None, **params: Any) -> list[Record]:
        # The driver encodes a datetime slowly: `now` goes only to the statements that read it.
        now = {"now": self.now} if "now" in cypher.parameters(name) else {}
        return list(self._tx.run(cypher.load(name, dialect), {"tenant": self.tenant, **now, **params}))

    def _each(self, name: str, rows_param: str, rows: Sequence[Any], **params: Any) -> list[Record]:
        """A statement that UNWINDs `rows`: no round trip when there are none."""
        return self.run(name, **{rows_param: list(rows)}, **params) if rows else []

    def fold_versions(self, ids: Sequence[str]) -> int:
        """Fold the versions of their neighbourhood alone that notes `ids` kept (the upgrade to schema 10,
        store/upgrade.py): the number of notes changed."""
        plans = []
        for row in self.run("migrate/v10_note_versions", ids=list(ids)):
            versions = [{**v, "valid_from": time_of(v["valid_from"]), "valid_to": time_of(v["valid_to"])}
                        for v in row["versions"]]
            note = {"updated_at": time_of(row["updated_at"]),
                    "neighbourhood_after": [time_of(t) for t in row["neighbourhood_after"]]}
            if (plan := folding(row["id"], note, versions)) is not None:
                plans.append({
                    "note_id": plan.note_id, "drop": list(plan.drop), "version": plan.version,
                    "kept": [{"old": old, "new": new, "valid_from": start} for old, new, start in plan.kept],
                    "updated_at": plan.updated_at, "neighbourhood_after": list(plan.neighbourhood_after),
                })
        self._each("migrate/v10_fold_versions", "foldings", plans)
        return len(plans)

    # -- notes ------------------------------------------------------------------------------------

    def create_notes(self, rows: Sequence[dict[str, Any]]) -> list[tuple[str, bool]]:
        try:
            records = self._each("note/create", "rows", rows)
        except ConstraintError as err:
            raise InvalidInput(f"a note id is already taken: {err.message}") from None
        created = {r["id"] for r in records if r["created"]}
        self.count_texts("note_text", {}, documents("note_text", {
            row["id"]: [row.get(f) for f in TEXT_FIELDS] for row in rows if row["id"] in created
        }))
        return [(r["id"], bool(r["created"])) for r in records]

    def notes(
        self, *, ids: Sequence[str] | None = None, keys: Sequence[tuple[str, str]] | None = None,
        session: str | None = None, analyses: Sequence[str] | None = None, limit: int = EVERY, offset: int = 0,
        links: bool = False, with_embedding: bool = False, filters: SearchFilter | None = None,
    ) -> list[Note]:
        if ids is not None:
            rows = self._each("note/get", "ids", list(ids), links=links, link_types=sorted(LINK_TYPES),
                              with_embedding=with_embedding)
        elif keys is not None:
            rows = self._each("note/existing", "keys", [{"source": s, "content_hash": h} for s, h in keys])
        elif session is not None:
            rows = self.run("note/session_tail", session=session, n=limit)
        elif analyses is not None:
            rows = self._each("note/by_analysis", "kinds", list(analyses), limit=limit)
        else:
            rows = self.run("note/list", limit=limit, offset=offset, **(filters or EVERY_NOTE).params())
        return [note_from_record(r["note"], r.get("links") or (), r.get("embedding")) for r in rows]

    def _revise(self, revisions: Sequence[NoteRevision], evolution_id: str | None) -> list[tuple[str, int]]:
        rows = [
            {"id": r.id, "values": {k: list(v) if isinstance(v, tuple) else v for k, v in r.values.items()},
             "reason": r.reason, "embedding": None if r.embedding is None else list(r.embedding),
             "passages": None if r.passages is None else list(r.passages)}
            for r in revisions
        ]
        versioned = [row for row, r in zip(rows, revisions, strict=True) if r.versioned]
        derived = [row for row, r in zip(rows, revisions, strict=True) if not r.versioned]
        try:
            records = self._each("note/revise", "revisions", versioned, evolution_id=evolution_id,
                                 fields=list(TEXT_FIELDS))
            refreshed = self._each("note/refresh", "revisions", derived, fields=list(TEXT_FIELDS))
        except ConstraintError:
            raise InvalidInput(
                f"another note in tenant {self.tenant!r} already has this content from the same source"
            ) from None
        changing = {r.id for r in revisions if set(r.values) & set(TEXT_FIELDS)}
        before: dict[str, list[Any]] = {}
        for record in [*records, *refreshed]:  # a note's first row holds its texts before the batch
            if record["note_id"] in changing:
                before.setdefault(record["note_id"], list(record["texts"]))
        after = {i: list(texts) for i, texts in before.items()}
        for revision in revisions:  # as `SET n += values` leaves them (the last revision of a note wins)
            for name, value in revision.values.items():
                if revision.id in after and name in TEXT_FIELDS:
                    after[revision.id][TEXT_FIELDS.index(name)] = value
        self.count_texts("note_text", documents("note_text", before), documents("note_text", after))
        return [(r["note_id"], r["version"]) for r in records]

    def delete_note(
        self, note_id: str, *, erase: tuple[str, tuple[str, ...], datetime | None] | None = None,
    ) -> list[str] | None:
        before = self.note_texts([note_id])
        rows = self.run("note/delete", id=note_id)
        self.count_texts("note_text", before, {})
        if rows and erase is not None:
            session, lines, joined = erase
            for line in lines:
                self._erase_text(session, line, joined)
        return list(rows[0]["restored"]) if rows else None

    def _erase_text(self, session: str, line: str, joined: datetime | None) -> None:
        quoting = self.run("terms/quoting_notes", session=session, line=line, fields=list(TEXT_FIELDS))
        self.run("note/erase_text", session=session, line=line, joined=joined)
        before = documents("note_text", {r["id"]: r["texts"] for r in quoting})
        self.count_texts("note_text", before, self.note_texts(list(before)))

    # -- links and evolutions ---------------------------------------------------------------------

    def _link(self, links: Sequence[Link], evolution_id: str | None, invalidate: str | None) -> list[Link]:
        if invalidate is not None:
            rows = [{"source_id": s.source_id, "target_id": s.target_id, "type": validation.link_type(s.type)}
                    for s in links]
            self._each("link/invalidate", "links", rows, reason=invalidate, evolution_id=evolution_id)
            return []
        made = self._each("link/create", "rows", [_link_row(link) for link in links], evolution_id=evolution_id)
        return [link_from_record(r.data()) for r in made]

    def _supersede(self, pairs: Sequence[tuple[str, str, str]], evolution_id: str | None) -> None:
        rows = [{"old_id": old, "new_id": new, "reason": reason} for old, new, reason in pairs]
        self._each("evolution/supersede", "contradictions", rows, evolution_id=evolution_id)

    def _record_evolution(self, record: EvolutionRecord) -> None:
        self.run(
            "evolution/record", evolution_id=record.id, trigger_id=record.trigger_id, analysis=record.analysis,
            model=record.model, prompt_version=record.prompt_version, decision=record.decision,
            prompt_tokens=record.prompt_tokens, completion_tokens=record.completion_tokens,
            revised=[{"note_id": note_id, "version": version} for note_id, version in record.revised],
        )

    def archive(self, note_ids: Sequence[str], archive: bool = True) -> list[str]:
        return [r["id"] for r in self.run("note/archive", ids=list(note_ids), archive=archive)]

    def usage(self) -> list[NoteUsage]:
        return [NoteUsage(r["id"], time_of(r["created_at"]), time_of(r["last_accessed"]), r["recalls"], r["links"])
                for r in self.run("note/usage", link_types=sorted(LINK_TYPES))]

    def retention(self, policy: RetentionPolicy | None = None) -> RetentionPolicy | None:
        if policy is not None:
            self.run("tenant/set_retention", **policy.to_dict())
        rows = self.run("tenant/retention")
        return RetentionPolicy(**rows[0].data()) if rows else None

    def history(self, note_ids: Sequence[str], *, full: bool = False, attachments: bool = False) -> History:
        versions = self._versions(note_ids)
        attached = self._earlier_attachments(note_ids) if attachments else {}
        if not full:
            return History(versions, attached=attached)
        evolutions: dict[str, list[Evolution]] = {}
        superseded: dict[str, list[Supersession]] = {}
        for note_id in note_ids:
            evolutions[note_id] = [evolution_from_record(r["evolution"], r["revised"])
                                   for r in self.run("history/evolutions", id=note_id)]
            superseded[note_id] = [Supersession(r["id"], r["reason"] or "", time_of(r["at"]))
                                   for r in self.run("history/superseded_by", id=note_id)]
        return History(versions, {k: v for k, v in evolutions.items() if v}, {k: v for k, v in superseded.items() if v},
                       attached)

    def _versions(self, note_ids: Sequence[str]) -> dict[str, list[NoteVersion]]:
        kept: dict[str, list[NoteVersion]] = {}
        for row in self.run("history/versions", ids=list(note_ids)):
            version = version_from_record(row["version"])
            kept.setdefault(version.note_id, []).append(version)
        return kept

    # -- search -----------------------------------------------------------------------------------

    def schema_marker(self) -> dict[str, Any]:
        return self.run("admin/schema_marker_get")[0].data()

    def _nearest_notes(
        self, vector: Sequence[float], k: int, filters: SearchFilter, brief: bool
    ) -> list[tuple[Note, float]]:
        if self.tenant not in self._knn.large:
            small = self.run("note/vector_search_small", most=EXACT_NOTES, vector=list(vector), k=k, brief=brief,
                             **filters.params())[0]
            if small["held"] <= EXACT_NOTES:
                return [(_note(hit["note"], brief), float(hit["score"])) for hit in small["hits"]]
            self._knn.large.add(self.tenant)
        rows = self._knn_rows("note/vector_search", "note/vector_search_exact", vector, k, filters, brief)
        return [(_note(r["note"], brief), float(r["score"])) for r in rows]

    def _nearest_passages(
        self, vector: Sequence[float], k: int, filters: SearchFilter, brief: bool
    ) -> list[tuple[Note, float, int, int]]:
        held = self.run("note/passage_count", most=EXACT_PASSAGES + 1)[0]["held"]
        if not held:
            return []
        params = {"vector": list(vector), "k": k, "brief": brief, **filters.params()}
        rows = (self.run("note/passage_search_exact", **params) if held <= EXACT_PASSAGES
                else self._knn_rows("note/passage_search", "note/passage_search_exact", vector, k, filters, brief))
        return [(_note(r["note"], brief), float(r["score"]), int(r["start"]), int(r["end"])) for r in rows]

    def _knn_rows(
        self, name: str, exact: str, vector: Sequence[float], k: int, filters: SearchFilter, brief: bool,
    ) -> list[Record]:
        """The rows of the k-NN statement `name`, else of its `exact` scan. On Neo4j 5 an index is shared by all tenants
        and cannot filter while it searches (on 2026.01+ it filters by tenant, and only the rest of the filter is
        applied after): over-fetch by a multiple sized from the share of this tenant's (and filter's) nodes
        recent queries saw (the widest of them, forgotten slowly: a second statement costs more than a wider
        first one), widen once by the share this one saw, then scan the tenant exactly (also the path for
        tenants under k nodes). A share so small that the index would be read past MAX_FETCH (a small tenant in a
        large database, a tight filter, an early `as_of`) goes to the scan at once: the index read at its cap would
        most likely return too few and end in the scan anyway. Its over-fetch then shrinks a little each time,
        so that a share grown since tries the index again. Passage statements return each note once: k passages may be fewer notes."""
        params = {"vector": list(vector), "k": k, "brief": brief, **filters.params()}
        key = (name, self.tenant, filters != NO_FILTER)
        floor = min_candidates(self._knn)
        wanted = max(round(self._overfetch.get(key, 2.0) * k), floor)
        if wanted > MAX_FETCH:
            self._overfetch[key] *= OVERFETCH_MEMORY
            return self.run(exact, **params)
        fetch = min(MAX_FETCH, wanted)
        rows: list[Record] = []
        matched = 0  # nodes of the tenant that passed the filter (for passages: passages, of fewer notes)
        dialect = "25" if self._knn.tenant_in_index else None
        for _ in range(2):
            rows = self.run(name, dialect=dialect, fetch=fetch, **params)
            matched = rows[0]["matched"] if rows else 0
            seen = 1.5 * fetch / matched if matched else 10.0 * fetch / k
            self._overfetch[key] = max(2.0, seen, OVERFETCH_MEMORY * self._overfetch.get(key, 2.0))
            if matched >= k or fetch >= MAX_FETCH:
                break
            fetch = min(MAX_FETCH, round(self._overfetch[key] * k))
        if matched < k:
            rows = self.run(exact, **params)
        return rows

    def _note_bm25(
        self, query: str, k: int, filters: SearchFilter, fields: Mapping[str, float] | None, brief: bool
    ) -> list[tuple[Note, float]]:
        terms = lucene_query(query, fields)
        if not terms:  # nothing Lucene could match (punctuation only)
            return []
        words = query_words(query)
        self.flush_counts()
        rows = self.run("note/fulltext_search", query=terms, fetch=max(k, RESCORED),
                        terms=sorted(set(query_terms(words))), fields=list(boosts_of(fields, TEXT_FIELDS)),
                        brief=brief, **filters.params())
        return [(_note(r["note"], brief), found)
                for r, found in rescored(rows, words, fields, "note_text", k, lambda r: r["note"]["id"])]

    def expand(
        self, candidates: Mapping[str, float], seeds: Sequence[str], *, hops: int, decay: float,
        weights: Mapping[str, float], limit: int, names: Sequence[str] = (), speaker_prior: float = 0.0,
        deep_seeds: int = 5, filters: SearchFilter = NO_FILTER,
    ) -> list[tuple[Note, float, list[Step]]]:
        rows = self.run(
            "search/expand", candidates=[{"id": i, "score": s} for i, s in candidates.items()],
            seeds=[{"id": i, "score": candidates[i]} for i in seeds], seed_ids=list(seeds), hops=hops, decay=decay,
            weights={t: float(w) for t, w in weights.items() if w > 0}, limit=limit, names=list(names),
            speaker_prior=speaker_prior, deep_seeds=deep_seeds, **filters.params(),
        )
        return [(note_from_record(r["note"]), float(r["score"]), [Step(**step) for step in r["path"]]) for r in rows]

    def statistics(self, index: str) -> Statistics:
        fields = INDEXES[index]
        row = self.run("terms/statistics", index=index)[0]
        df = {(name, r[0]): held for r in row["terms"] for name, held in zip(fields, r[1], strict=True) if held}
        return Statistics({f: n for f, n in zip(fields, row["docs"] or (), strict=False) if n},
                          {f: n for f, n in zip(fields, row["tokens"] or (), strict=False) if n}, df)

    def placed(self, filters: SearchFilter) -> list[Placed]:
        return [Placed(r["id"], r["session"], r["seq"], time_of(r["event_time"]), time_of(r["created_at"]),
                       time_of(r["updated_at"]), time_of(r["invalid_at"]),
                       tuple(time_of(t) for t in r["archived_periods"]), tuple(r["entities"]))
                for r in self.run("note/placed", **filters.params())]

    def speakers(self, *, calls: bool = False) -> tuple[list[str], list[tuple[str, str, int]]]:
        names = [r["speaker"] for r in self.run("search/speakers")]
        return names, [(r["speaker"], r["name"], int(r["times"])) for r in self.run("search/speaker_calls")] if calls else []

    def update(self, label: Counted, changes: Sequence[tuple[str, Mapping[str, Any]]] = (), *,
               used: Sequence[str] = (), now: datetime | None = None) -> None:
        if changes:
            if label not in _UPDATED:
                raise ValueError(f"update sets properties of segments or facts, not of a {label}")
            self._each(_UPDATED[label], "rows", [{"id": i, "values": dict(values)} for i, values in changes])
        if used:
            self._each(_COUNTED[label], "ids", used, now=now)


__all__ = ["KnnState", "Neo4jNotes", "min_candidates"]
