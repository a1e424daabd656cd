"""What must hold in a tenant's graph whatever happened to it (concurrent writers, a killed process, a lost
server), checked over its export, so that one set of rules serves both stores: `amem-graph check`.

Each rule names what it found; an empty list is a sound tenant."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, get_args

from ..ingest.transfer import LABELS, RELATIONSHIP_TYPES
from ..models import LINK_TYPES, AnalysisKind
from ..store.bm25 import Document, Statistics, counts_of
from ..store.lucene import PAGE_FIELDS, TEXT_FIELDS

RULES = {
    "ends": "every relationship joins two nodes of the tenant",
    "vocabulary": "labels and relationship types are the engine's own",
    "identity": "note ids, and a note's (source, content hash), are unique",
    "embedding": "every note has a finite vector of the index's dimension, so the vector index holds it",
    "versions": "a note at version v has versions 1..v-1, each once, each naming the note",
    "evolutions": "a version written by an evolution is REVISED by that Evolution, and only by it",
    "chains": "a session's notes (and pages) form one NEXT chain in seq order",
    "links": "links join notes, with a confidence from 0 to 1",
    "mentions": "an entity's mention count is the number of notes that mention it",
    "passages": "a passage belongs to one note, spans part of its content, and has a vector of the index's dimension",
    "archives": "a note is archived exactly when its archive periods are open: an odd number of bounds, the last its "
                "archived_at",
    "statistics": "the ranking statistics search reads (per field, the documents and terms; per term, the documents "
                  "that hold it) are those the tenant's notes and pages give",
    "analysis": "a note is analysed or queued (its analysis is one the engine knows), and the model's analysis that "
                "was queued for it applied at most once, never while it is still marked pending",
}
ANALYSES = frozenset(get_args(AnalysisKind))
MAX_SHOWN = 20  # violations listed per rule; the count is always whole


@dataclass
class Violation:
    rule: str
    detail: str


@dataclass
class TenantCheck:
    tenant: str
    nodes: int = 0
    relationships: int = 0
    notes: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # violations per rule
    violations: list[Violation] = field(default_factory=list)  # up to MAX_SHOWN per rule

    @property
    def sound(self) -> bool:
        return not self.counts

    def add(self, rule: str, detail: str) -> None:
        self.counts[rule] = self.counts.get(rule, 0) + 1
        if self.counts[rule] <= MAX_SHOWN:
            self.violations.append(Violation(rule, detail))


def check(tenant: str, dimension: int | None, records: Iterable[Mapping[str, Any]],
          statistics: Mapping[str, Statistics] | None = None) -> TenantCheck:
    """The rules over one tenant's export records (nodes, then relationships, as `admin.export` gives them), and
    the ranking statistics its store keeps (by index), when given."""
    report = TenantCheck(tenant)
    nodes: dict[str, Mapping[str, Any]] = {}
    rels: list[Mapping[str, Any]] = []
    for record in records:
        if record["kind"] == "node":
            nodes[record["key"]] = record
        else:
            rels.append(record)
    report.nodes, report.relationships = len(nodes), len(rels)
    kept = _ends(report, nodes, rels)
    by_label: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for key, node in nodes.items():
        for label in node["labels"]:
            by_label[label].append({**node["props"], "$key": key})
        if unknown := set(node["labels"]) - LABELS:
            report.add("vocabulary", f"node {key} has labels {sorted(unknown)}")
    for rel in kept:
        if rel["type"] not in RELATIONSHIP_TYPES:
            report.add("vocabulary", f"relationship {rel['type']!r} from {rel['start']}")
    report.notes = len(by_label["Note"])
    _identity(report, by_label["Note"])
    _archives(report, by_label["Note"])
    _embeddings(report, by_label["Note"], dimension)
    _versions(report, nodes, kept)
    _evolutions(report, nodes, kept)
    _chains(report, nodes, kept, "Note", "session")
    _chains(report, nodes, kept, "Page", "session_id")
    _links(report, nodes, kept)
    _mentions(report, nodes, kept)
    _passages(report, nodes, kept, dimension)
    _analyses(report, nodes, by_label["Note"])
    if statistics is not None:
        _statistics(report, by_label, statistics)
    return report


INDEXED = {"note_text": ("Note", TEXT_FIELDS), "page_text": ("Page", PAGE_FIELDS)}


def _statistics(report: TenantCheck, by_label: Mapping[str, list[Mapping[str, Any]]],
                kept: Mapping[str, Statistics]) -> None:
    """Each index's statistics as the store keeps them against those recounted from the texts."""
    for index, (label, fields) in INDEXED.items():
        docs, tokens, df = counts_of(Document.of(fields, [props.get(f) for f in fields]) for props in by_label[label])
        held = kept.get(index, Statistics({}, {}, {}))
        for name, counted, stored in (("documents", docs, held.docs), ("terms", tokens, held.tokens)):
            for field_name in sorted(set(counted) | set(stored)):
                if counted.get(field_name, 0) != stored.get(field_name, 0):
                    report.add("statistics", f"{index} {field_name}: {stored.get(field_name, 0)} {name} kept, "
                                             f"{counted.get(field_name, 0)} in the texts")
        for key in sorted(k for k in set(df) | set(held.df) if df.get(k, 0) != held.df.get(k, 0)):
            report.add("statistics", f"{index} {key[0]} term {key[1]!r}: in {held.df.get(key, 0)} documents kept, "
                                     f"{df.get(key, 0)} in the texts")


def _analyses(report: TenantCheck, nodes: Mapping[str, Any], notes: list[Mapping[str, Any]]) -> None:
    applied: Counter[str] = Counter()
    for node in nodes.values():
        if "Evolution" in node["labels"] and json.loads(node["props"].get("decision") or "{}").get("queued"):
            applied[node["props"].get("trigger_note_id")] += 1
    for note in notes:
        kind, times = note.get("analysis") or "none", applied[note.get("id")]
        if kind not in ANALYSES:
            report.add("analysis", f"note {note.get('id')!r} has analysis {kind!r}")
        if times > 1:
            report.add("analysis", f"the queued analysis of note {note.get('id')!r} applied {times} times")
        if kind == "pending" and times:
            report.add("analysis", f"note {note.get('id')!r} is marked pending, but its analysis applied")


def _passages(report: TenantCheck, nodes: Mapping[str, Any], rels: list[Mapping[str, Any]], dimension: int | None) -> None:
    owners: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for rel in rels:
        if rel["type"] == "HAS_PASSAGE":
            owners[rel["end"]].append(nodes[rel["start"]]["props"])
    for key, node in nodes.items():
        if "Passage" not in node["labels"]:
            continue
        props, notes = node["props"], owners[key]
        if len(notes) != 1:
            report.add("passages", f"passage {props.get('id')!r} belongs to {len(notes)} notes")
            continue
        start, end, content = props.get("start"), props.get("end"), notes[0].get("content") or ""
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(content)):
            report.add("passages", f"passage {props.get('id')!r} spans {start}..{end} of a {len(content)}-character note")
        vector = props.get("embedding")
        if not isinstance(vector, list) or (dimension is not None and len(vector) != dimension):
            report.add("passages", f"passage {props.get('id')!r} has no vector of {dimension} dimensions")


def _ends(report: TenantCheck, nodes: Mapping[str, Any], rels: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    kept = []
    for rel in rels:
        missing = [end for end in (rel["start"], rel["end"]) if end not in nodes]
        if missing:
            report.add("ends", f"{rel['type']} {rel['start']}->{rel['end']}: {', '.join(missing)} not in the tenant")
        else:
            kept.append(rel)
    return kept


def _archives(report: TenantCheck, notes: list[Mapping[str, Any]]) -> None:
    for note in notes:
        bounds = note.get("archived_periods") or []
        archived = note.get("archived_at")
        if (archived is not None) != (len(bounds) % 2 == 1) or (archived is not None and bounds[-1] != archived):
            report.add("archives", f"note {note.get('id')!r} has archived_at {archived!r} and archive periods {bounds!r}")


def _identity(report: TenantCheck, notes: list[Mapping[str, Any]]) -> None:
    for note_id, n in Counter(note.get("id") for note in notes).items():
        if n > 1:
            report.add("identity", f"note id {note_id!r} is held by {n} notes")
    for (source, digest), n in Counter((note.get("source"), note.get("content_hash")) for note in notes).items():
        if n > 1:
            report.add("identity", f"{n} notes hold the same content hash {str(digest)[:12]} from source {source!r}")


def _embeddings(report: TenantCheck, notes: list[Mapping[str, Any]], dimension: int | None) -> None:
    for note in notes:
        vector = note.get("embedding")
        if not isinstance(vector, list) or not vector:
            report.add("embedding", f"note {note.get('id')!r} has no vector")
        elif dimension is not None and len(vector) != dimension:
            report.add("embedding", f"note {note.get('id')!r} has {len(vector)} dimensions, the index {dimension}")
        elif not all(isinstance(x, int | float) and math.isfinite(x) for x in vector):
            report.add("embedding", f"note {note.get('id')!r} has a vector with NaN, infinity or non-numbers")



def _versions(report: TenantCheck, nodes: Mapping[str, Any], rels: list[Mapping[str, Any]]) -> None:
    held: dict[str, list[Any]] = defaultdict(list)
    owners: Counter[str] = Counter()
    for rel in rels:
        if rel["type"] != "HAS_VERSION":
            continue
        note, version = nodes[rel["start"]]["props"], nodes[rel["end"]]["props"]
        owners[rel["end"]] += 1
        held[note.get("id")].append(version.get("version"))
        if version.get("note_id") != note.get("id"):
            report.add("versions", f"version {version.get('version')} of note {note.get('id')!r} names note "
                                   f"{version.get('note_id')!r}")
    for key, node in nodes.items():
        if "NoteVersion" in node["labels"] and owners[key] != 1:
            report.add("versions", f"version {node['props'].get('version')} of note {node['props'].get('note_id')!r} "
                                   f"belongs to {owners[key]} notes")
        if "Note" not in node["labels"]:
            continue
        props = node["props"]
        current = props.get("version")
        if not isinstance(current, int) or current < 1:
            report.add("versions", f"note {props.get('id')!r} has version {current!r}")
            continue
        versions = sorted(held.get(props.get("id"), []), key=lambda v: (not isinstance(v, int), v))
        if versions != list(range(1, current)):
            report.add("versions", f"note {props.get('id')!r} is at version {current} with versions {versions}")


def _evolutions(report: TenantCheck, nodes: Mapping[str, Any], rels: list[Mapping[str, Any]]) -> None:
    revised_by: dict[str, list[Any]] = defaultdict(list)
    evolution_ids = {n["props"].get("id") for n in nodes.values() if "Evolution" in n["labels"]}
    for rel in rels:
        start, end = nodes[rel["start"]], nodes[rel["end"]]
        if rel["type"] == "REVISED":
            revised_by[rel["end"]].append(start["props"].get("id"))
        elif rel["type"] == "TRIGGERED_BY" and start["props"].get("trigger_note_id") != end["props"].get("id"):
            report.add("evolutions", f"evolution {start['props'].get('id')!r} names trigger "
                                     f"{start['props'].get('trigger_note_id')!r} but points at {end['props'].get('id')!r}")
    triggers = Counter(r["start"] for r in rels if r["type"] == "TRIGGERED_BY")
    for key, node in nodes.items():
        props = node["props"]
        if "Evolution" in node["labels"] and triggers[key] > 1:
            report.add("evolutions", f"evolution {props.get('id')!r} has {triggers[key]} triggers")
        if "NoteVersion" not in node["labels"]:
            continue
        wrote = props.get("evolution_id")
        expected = [wrote] if wrote is not None else []
        if revised_by.get(key, []) != expected:
            where = f"version {props.get('version')} of note {props.get('note_id')!r}"
            if wrote is not None and wrote not in evolution_ids:
                report.add("evolutions", f"{where} was written by evolution {wrote!r}, which is missing")
            else:
                report.add("evolutions", f"{where} names evolution {wrote!r} but is REVISED by {revised_by.get(key, [])}")


def _chains(report: TenantCheck, nodes: Mapping[str, Any], rels: list[Mapping[str, Any]], label: str,
            session_field: str) -> None:
    sessions: dict[Any, list[str]] = defaultdict(list)
    for key, node in nodes.items():
        if label in node["labels"] and node["props"].get(session_field) is not None:
            sessions[node["props"][session_field]].append(key)
    nexts: dict[str, list[str]] = defaultdict(list)
    into: Counter[str] = Counter()
    for rel in rels:
        if rel["type"] == "NEXT" and label in nodes[rel["start"]]["labels"]:
            nexts[rel["start"]].append(rel["end"])
            into[rel["end"]] += 1
    for session, keys in sessions.items():
        ordered = sorted(keys, key=lambda k: _seq(nodes[k]))
        seqs = [_seq(nodes[k]) for k in ordered]
        name = f"{label.lower()}s of session {session!r}"
        if len(set(seqs)) != len(seqs):
            report.add("chains", f"{name} repeat a seq: {sorted(seqs)[:10]}")
            continue
        expected = list(zip(ordered, ordered[1:]))
        actual = [(k, e) for k in ordered for e in nexts.get(k, [])]
        if actual != expected or any(into[k] > 1 for k in ordered):
            report.add("chains", f"{name}: NEXT does not join seq {seqs[0]}..{seqs[-1]} in order "
                                 f"({len(actual)} NEXT for {len(ordered)} {label.lower()}s)")


def _seq(node: Mapping[str, Any]) -> float:
    seq = node["props"].get("seq")
    return seq if isinstance(seq, int | float) else math.inf


def _links(report: TenantCheck, nodes: Mapping[str, Any], rels: list[Mapping[str, Any]]) -> None:
    for rel in rels:
        if rel["type"] not in LINK_TYPES:
            continue
        start, end = nodes[rel["start"]], nodes[rel["end"]]
        if "Note" not in start["labels"] or "Note" not in end["labels"]:
            report.add("links", f"{rel['type']} from {rel['start']} to {rel['end']} joins a node that is not a note")
        confidence = rel["props"].get("confidence")
        if not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
            report.add("links", f"{rel['type']} {start['props'].get('id')!r}->{end['props'].get('id')!r} has confidence "
                                f"{json.dumps(confidence)}")


def _mentions(report: TenantCheck, nodes: Mapping[str, Any], rels: list[Mapping[str, Any]]) -> None:
    mentioned: Counter[str] = Counter(r["end"] for r in rels if r["type"] == "MENTIONS")
    for key, node in nodes.items():
        if "Entity" in node["labels"] and node["props"].get("mentions") != mentioned[key]:
            report.add("mentions", f"entity {node['props'].get('key')!r} counts {node['props'].get('mentions')} "
                                   f"mentions; {mentioned[key]} notes mention it")


__all__ = ["MAX_SHOWN", "RULES", "TenantCheck", "Violation", "check"]
