"""A tenant as JSON Lines, and back: every node (labels, properties, embeddings) and relationship (type,
properties), so an export imported into an empty database is the same graph — ids, links with their
reasons, versions, evolutions, pages, segments, persona facts, and entity merges held or ended."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any, TextIO

from neo4j.time import DateTime

from ..core import validation
from ..errors import InvalidInput
from ..models import LINK_TYPES

FORMAT = "amem-graph-export"
VERSION = 1
# What an import may create: the engine's own labels and relationship types, nothing a file makes up.
LABELS = frozenset({"Note", "NoteVersion", "Evolution", "TenantLock", "Page", "Chain", "Segment", "Persona", "Fact",
                    "Entity", "Passage", "Retention"})
RELATIONSHIP_TYPES = LINK_TYPES | {
    "NEXT", "HAS_VERSION", "TRIGGERED_BY", "REVISED", "SUPERSEDED_BY", "HAS_PAGE", "DERIVED_FROM", "HAS_FACT",
    "MENTIONS", "ALIAS_OF", "WAS_ALIAS_OF", "HAS_PASSAGE",
}


def to_json(value: Any) -> Any:
    """A property value as JSON: date-times tagged so that they come back as date-times."""
    if isinstance(value, DateTime | datetime):
        native = value.to_native() if isinstance(value, DateTime) else value
        return {"$datetime": native.isoformat()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    return value


def from_json(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$datetime"}:
            return datetime.fromisoformat(value["$datetime"])
        raise InvalidInput(f"unexpected map property {value!r}")
    if isinstance(value, list):
        return [from_json(v) for v in value]
    return value


def write(out: TextIO, header: dict[str, Any], records: Iterable[dict[str, Any]]) -> int:
    """The header line, then one line per record; returns the number of records."""
    out.write(json.dumps({"format": FORMAT, "version": VERSION, **header}) + "\n")
    count = 0
    for count, record in enumerate(records, start=1):
        out.write(json.dumps(record, separators=(",", ":")) + "\n")
    return count


def read(lines: Iterable[str]) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """(header, nodes, relationships) of an export, every line checked before anything is imported."""
    rows = validation.json_lines(lines)
    header = next(rows, (1, {}))[1]
    if header.get("format") != FORMAT or header.get("version") != VERSION:
        raise InvalidInput(f"not an {FORMAT} file of version {VERSION} (first line: {str(header)[:120]})")
    nodes, relationships = [], []
    for number, record in rows:
        if record.get("kind") == "node":
            if set(record.get("labels", ())) - LABELS or not record.get("labels"):
                raise InvalidInput(f"line {number}: labels {record.get('labels')} are not the engine's")
            nodes.append(record)
        elif record.get("kind") == "relationship":
            if record.get("type") not in RELATIONSHIP_TYPES:
                raise InvalidInput(f"line {number}: relationship type {record.get('type')!r} is not the engine's")
            relationships.append(record)
        else:
            raise InvalidInput(f"line {number}: a record must be a node or a relationship")
    return header, nodes, relationships


def node_rows(nodes: Iterable[dict[str, Any]], tenant: str, dimension: int) -> Iterator[dict[str, Any]]:
    """Import rows: properties decoded, the embedding apart and of the model's dimension, and every node of the
    export's tenant."""
    for node in nodes:
        props = {name: from_json(value) for name, value in node["props"].items()}
        if props.get("tenant") != tenant:
            raise InvalidInput(f"node {node['key']} belongs to tenant {props.get('tenant')!r}, not {tenant!r}")
        embedding = props.pop("embedding", None)
        embedding = None if embedding is None else validation.vector(embedding, dimension)
        yield {"key": node["key"], "labels": node["labels"], "props": props, "embedding": embedding}
