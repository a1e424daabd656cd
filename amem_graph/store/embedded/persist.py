"""The embedded graph on disk: a snapshot and a journal of the transactions committed after it, in a
folder that one process writes at a time and any number read.

- `graph.snapshot`: a zip (CRC-checked by zipfile) of meta.json, nodes and relationships as JSON Lines,
  and the vectors as .npy arrays grouped by dimension. Written to a temporary file, flushed to disk, then
  renamed over the old one (atomic), so a crash leaves the old or the new snapshot, never half of one.
- `journal.jsonl`: one line per committed transaction, with its number and a SHA-256 of its operations,
  flushed before the transaction returns. Loading replays the lines after the snapshot's number. A torn
  last line (a crash while appending) is a transaction that never returned, and is dropped with a log
  line; a damaged line anywhere else, or a damaged snapshot, stops loading with CorruptStore.
- `lock`: an exclusive flock held by the one process that writes. Another process that opens the folder while
  it is held (`readers=True`), or that opens it only to read (`only_read=True`: it never takes the lock), reads it: it loads the snapshot and the journal without changing either, and
  follows the writer's commits (`follow`) — whole transactions only: a line still being written is left for
  the next look, and a new snapshot (a compaction) is loaded afresh. Its writes are refused.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import logging
import os
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from ...core.log import event
from ...errors import StoreError, StoreUnavailable
from ...ingest.transfer import from_json, to_json
from .graph import ConstraintViolation, Op, PropertyGraph

FORMAT = "amem-graph-embedded"
VERSION = 1
CHECKPOINT_BYTES = 64 * 2**20  # journal size from which the next commit writes a new snapshot
READER_ATTEMPTS = 5  # loads a reader tries while the writer keeps compacting under it


class CorruptStore(StoreError):
    """The folder's files are damaged; nothing was reset or overwritten."""


def _encode(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return {"$vector": [float(x) for x in value]}
    return to_json(value)


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"$vector"}:
        return np.asarray(value["$vector"], dtype=np.float32)
    return from_json(value)


class Folder:
    """The files of one embedded store; `open()` takes the lock and loads the graph."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path).expanduser().resolve()
        self.snapshot = self.path / "graph.snapshot"
        self.journal = self.path / "journal.jsonl"
        self._lock: IO[str] | None = None
        self._journal_file: IO[str] | None = None
        self.tx = 0  # the number of the last committed transaction
        self.saved_tx = 0  # the transaction the snapshot holds everything up to
        self.writer: str | None = None  # a reader's: the process that writes the folder
        self._seen: tuple[tuple[int, int, int] | None, int] | None = None  # a reader's: the snapshot read, journal bytes
        self._read_up_to = 0  # the journal's bytes that the last load read whole

    def open(self, *, readers: bool = False, only_read: bool = False) -> PropertyGraph:
        """The graph, loaded; this process the folder's writer, or, with `readers` and another process writing,
        one of its readers (`writer` says which); with `only_read`, a reader whether or not a process writes."""
        self.path.mkdir(parents=True, exist_ok=True)
        if only_read or not self._take_lock(wait=not readers):
            self.writer = None if only_read else self._holder()
            return self._load_as_reader()
        try:
            graph = self._load()
        except BaseException:
            self.close()
            raise
        self._journal_file = self.journal.open("a", encoding="utf-8")
        graph.on_commit = self.commit
        return graph

    def follow(self, graph: PropertyGraph) -> PropertyGraph:
        """A reader's graph brought up to the writer's last whole commit: the same graph with the journal's new
        transactions applied, or a new one loaded afresh when the writer wrote a new snapshot (or a line would not
        apply). When the writer stops, this process goes on reading what it committed; it never becomes the writer
        (open the store again to write)."""
        if self._seen is None or self._seen[0] != _identity(self.snapshot) or _size(self.journal) < self._seen[1]:
            return self._load_as_reader()
        applied = False
        for number, ops, end in _journal_entries(self.journal, start=self._seen[1], tolerate_torn=True):
            if number > self.tx:
                if number != self.tx + 1:  # lines missing: the writer compacted meanwhile; start again
                    return self._load_as_reader()
                try:
                    for op in ops:
                        graph.apply(op)
                except (KeyError, IndexError, TypeError, ValueError, ConstraintViolation):
                    return self._load_as_reader()  # half applied: the whole graph again, as the files hold it
                self.tx = number
                applied = True
            self._seen = (self._seen[0], end)
        if applied:
            event("embedded_followed", logging.DEBUG, path=str(self.path), tx=self.tx)
        return graph

    @property
    def reading(self) -> bool:
        """Whether this process reads the folder another process writes."""
        return self._journal_file is None and self._seen is not None

    def _load_as_reader(self) -> PropertyGraph:
        """The snapshot and the journal's whole lines, changing neither; retried if the writer compacts meanwhile."""
        for _ in range(READER_ATTEMPTS):
            before = _identity(self.snapshot)
            self.tx = self.saved_tx = 0
            try:
                graph = self._load(repair=False)
            except (CorruptStore, FileNotFoundError):
                if _identity(self.snapshot) != before:
                    continue  # the snapshot changed under the read: read the new one
                raise
            if _identity(self.snapshot) == before:
                self._seen = (before, self._read_up_to)
                return graph
        raise StoreUnavailable(f"the embedded store in {self.path} kept changing while it was read; try again")

    def commit(self, ops: list[Op]) -> None:
        """Append one transaction to the journal, on disk before returning; if that fails, the journal is
        cut back to where it was and the error raised (the graph then undoes the transaction)."""
        if self._journal_file is None:
            raise StoreUnavailable(f"the embedded store in {self.path} is closed")
        body = json.dumps([_op_with(op, _encode) for op in ops], separators=(",", ":"))
        line = json.dumps({"tx": self.tx + 1, "sha256": hashlib.sha256(body.encode()).hexdigest(), "ops": body})
        start = self._journal_file.tell()
        try:
            self._journal_file.write(line + "\n")
            self._journal_file.flush()
            os.fsync(self._journal_file.fileno())
        except BaseException:
            self._journal_file.truncate(start)
            raise
        self.tx += 1

    @property
    def is_open(self) -> bool:
        return self._journal_file is not None

    def checkpoint_due(self) -> bool:
        return self.journal.exists() and self.journal.stat().st_size >= CHECKPOINT_BYTES

    def unsaved(self) -> bool:
        """Whether transactions were committed after the snapshot (they are in the journal)."""
        return self.tx > self.saved_tx

    def save(self, graph: PropertyGraph) -> None:
        """A new snapshot of the whole graph, then an empty journal."""
        tmp = self.snapshot.with_suffix(".tmp")
        with tmp.open("wb") as raw:
            raw.write(_snapshot_bytes(graph, self.tx))
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, self.snapshot)
        _fsync_dir(self.path)
        self.saved_tx = self.tx
        if self._journal_file is not None:
            self._journal_file.close()
        self.journal.write_text("")  # lines at or below the snapshot's number would be skipped anyway
        self._journal_file = self.journal.open("a", encoding="utf-8")

    def close(self) -> None:
        for handle in (self._journal_file, self._lock):
            if handle is not None:
                handle.close()
        self._journal_file = self._lock = None
        self._seen = None

    # -- internals --------------------------------------------------------------------------------

    def _take_lock(self, *, wait: bool = True) -> bool:
        """The writer's lock: True when taken; False when another process holds it and `wait` is False, else
        StoreUnavailable naming that process."""
        lock = (self.path / "lock").open("a+", encoding="utf-8")
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            if not wait:
                return False
            raise StoreUnavailable(
                f"the embedded store in {self.path} is open in process {self._holder()}, which writes it; one "
                "process writes at a time (close it, or point AMEM_DATA_DIR at another folder)"
            ) from None
        lock.seek(0)
        lock.truncate()
        lock.write(str(os.getpid()))
        lock.flush()
        self._lock = lock
        return True

    def _holder(self) -> str:
        try:
            return (self.path / "lock").read_text(encoding="utf-8").strip() or "another process"
        except OSError:
            return "another process"

    def _load(self, *, repair: bool = True) -> PropertyGraph:
        """The snapshot, then the journal's transactions after it; the writer (`repair`) cuts a torn last line
        off, a reader leaves it (it may be a line the writer is writing now)."""
        graph = PropertyGraph()
        if self.snapshot.exists():
            self.tx = self.saved_tx = _read_snapshot(self.snapshot, graph)
        self._read_up_to = 0
        if self.journal.exists():
            good = 0
            for number, ops, end in _journal_entries(self.journal, tolerate_torn=not repair):
                if number <= self.saved_tx and self.tx == self.saved_tx:
                    pass  # written before the snapshot (a crash before the journal was emptied): in it already
                elif number != self.tx + 1:
                    raise CorruptStore(
                        f"{self.journal}: transaction {number} follows transaction {self.tx}; the journal is "
                        "missing or repeating lines, so the store was not opened"
                    )
                else:
                    try:
                        for op in ops:
                            graph.apply(op)
                    except (KeyError, IndexError, TypeError, ValueError, ConstraintViolation) as err:
                        raise CorruptStore(
                            f"{self.journal}: transaction {number} does not apply to the graph before it ({err!r}); "
                            "the store was not opened"
                        ) from None
                    self.tx = number
                good = end
            self._read_up_to = good
            if repair and good < self.journal.stat().st_size:  # a torn last line: cut it, so the next starts clean
                with self.journal.open("r+b") as raw:
                    raw.truncate(good)
                    raw.flush()
                    os.fsync(raw.fileno())
        return graph


def _identity(path: Path) -> tuple[int, int, int] | None:
    """Which file `path` is now (inode, size, modification time): a new snapshot is a new file."""
    try:
        held = path.stat()
    except FileNotFoundError:
        return None
    return (held.st_ino, held.st_size, held.st_mtime_ns)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _op_with(op: Op, convert: Callable[[Any], Any]) -> Op:
    """An operation with each value of its properties (always its last element) converted."""
    if op[0] not in ("node", "set", "set_rel", "rel"):
        return op
    return [*op[:-1], {name: convert(value) for name, value in op[-1].items()}]


def _journal_entries(path: Path, *, start: int = 0, tolerate_torn: bool = False) -> Iterator[tuple[int, list[Op], int]]:
    """(transaction number, its operations, the byte offset after its line) for each whole line from byte `start`.
    A last line without its newline is a commit that never returned (logged, unless `tolerate_torn`: a reader may
    see the writer's line half-written)."""
    try:
        with path.open("rb") as raw:
            raw.seek(start)
            lines = raw.read().split(b"\n")
    except FileNotFoundError:
        return
    torn_tail = lines[-1] != b""  # every complete line ends with a newline
    end = start
    for number, line in enumerate(lines, start=1):
        last = number == len(lines)
        if not line:
            end += 0 if last else 1
            continue
        if last and torn_tail:  # written without its newline: the commit never returned, so it never happened
            if not tolerate_torn:
                event("embedded_torn_journal_line", logging.WARNING, path=str(path), line=number)
            return
        try:
            entry = json.loads(line)
            body = entry["ops"]
            if hashlib.sha256(body.encode()).hexdigest() != entry["sha256"]:
                raise ValueError("checksum mismatch")
            operations = [_op_with(op, _decode) for op in json.loads(body)]
        except (ValueError, KeyError, TypeError) as err:
            raise CorruptStore(f"{path} line {number} is damaged ({err}); the store was not opened") from None
        end += len(line) + 1
        yield int(entry["tx"]), operations, end


def _snapshot_bytes(graph: PropertyGraph, tx: int) -> bytes:
    vectors: dict[int, list[np.ndarray]] = {}

    def props(values: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for name, value in values.items():
            if isinstance(value, np.ndarray):
                rows = vectors.setdefault(value.shape[0], [])
                rows.append(value)
                out[name] = {"$row": [value.shape[0], len(rows) - 1]}
            else:
                out[name] = to_json(value)
        return out

    def json_lines(rows: Iterable[list[Any]]) -> str:
        return "".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows)

    nodes = json_lines([n.key, sorted(n.labels), props(n.props)] for n in graph.nodes.values())
    rels = json_lines([r.key, r.type, r.start, r.end, props(r.props)] for r in graph.rels.values())
    meta = {"format": FORMAT, "version": VERSION, "tx": tx, "next_key": graph.next_key,
            "nodes": len(graph.nodes), "relationships": len(graph.rels)}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("meta.json", json.dumps(meta))
        archive.writestr("nodes.jsonl", nodes)
        archive.writestr("relationships.jsonl", rels)
        for dimension, rows in vectors.items():
            array = io.BytesIO()
            np.save(array, np.vstack(rows).astype(np.float32), allow_pickle=False)
            archive.writestr(f"vectors-{dimension}.npy", array.getvalue())
    return buffer.getvalue()


def _read_snapshot(path: Path, graph: PropertyGraph) -> int:
    try:
        with zipfile.ZipFile(path) as archive:
            if (bad := archive.testzip()) is not None:
                raise ValueError(f"{bad} fails its CRC")
            meta = json.loads(archive.read("meta.json"))
            if meta.get("format") != FORMAT or meta.get("version") != VERSION:
                raise ValueError(f"not an amem-graph embedded snapshot of version {VERSION}: {meta}")
            vectors = {
                int(name[len("vectors-"):-len(".npy")]): np.load(io.BytesIO(archive.read(name)), allow_pickle=False)
                for name in archive.namelist() if name.startswith("vectors-")
            }

            def props(values: dict[str, Any]) -> dict[str, Any]:
                return {
                    k: vectors[v["$row"][0]][v["$row"][1]] if isinstance(v, dict) and "$row" in v else from_json(v)
                    for k, v in values.items()
                }

            for line in archive.read("nodes.jsonl").decode().splitlines():
                key, labels, values = json.loads(line)
                graph.create_node(labels, props(values), key=key)
            for line in archive.read("relationships.jsonl").decode().splitlines():
                key, type_, start, end, values = json.loads(line)
                graph.create_rel(type_, graph.nodes[start], graph.nodes[end], props(values), key=key)
            if (len(graph.nodes), len(graph.rels)) != (meta["nodes"], meta["relationships"]):
                raise ValueError("the counts do not match the snapshot's own")
            graph.next_key = max(graph.next_key, int(meta["next_key"]))
            return int(meta["tx"])
    except (zipfile.BadZipFile, ValueError, KeyError, IndexError, OSError) as err:
        raise CorruptStore(f"{path} is damaged ({err}); the store was not opened and nothing was changed") from None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
