"""`bench entities`: the extractors against a hand-labelled gold set of entity mentions (tests/data/entities/): precision
and recall per kind, for named things (any named kind) and topics, per set and overall, for each extractor asked.

A conversation's turns are read as `ingest` reads them and the extractor runs over all of them, so that a topic
counts only where it recurs as it must to be shown (entities.topics.MIN_TOPIC_NOTES). A found mention matches a gold
one of the same turn when their keys are equal or one's words are a run of the other's ("Lorraine Warren" and
"Warren"); each gold mention matches once."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..entities import entity_key
from ..entities.extract import Extractor, default_extractor, extract
from ..entities.model import model_path
from ..entities.topics import MIN_TOPIC_NOTES
from ..errors import InvalidInput
from ..ingest import locomo
from ..models import ENTITY_KINDS, Mention

NAMED = "named"  # every kind but topic, matched whatever kind each side gives
Gold = dict[tuple[str, str, str], list[tuple[str, str]]]  # (set, conversation, turn) -> [(name, kind)]


def load_gold(path: Path) -> Gold:
    gold: Gold = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise InvalidInput(f"cannot read the gold set {path}: {err.strerror}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            gold[(row["set"], row["conversation"], row["turn"])] = [(m["name"], m["kind"]) for m in row["mentions"]]
        except (ValueError, KeyError, TypeError) as err:
            raise InvalidInput(f"{path} line {number} is not a gold turn: {err}") from None
    return gold


def run(gold_path: Path, data: Sequence[Path], extractors: Sequence[str], *, assistant: str = "assistant") -> dict[str, Any]:
    """Each extractor's figures on the gold turns of the data files given; a set is named by its file's stem up
    to the first '-' (locomo-dev.json is `locomo`); `assistant`, the speaker whose turns raise no topics."""
    gold = load_gold(gold_path)
    files = {Path(p).stem.split("-")[0]: Path(p) for p in data}
    if missing := {s for s, _, _ in gold} - files.keys():
        raise InvalidInput(f"the gold set names sets {sorted(missing)}: give their data with --data")
    out: dict[str, Any] = {"gold": str(gold_path), "turns": len(gold), "extractors": {}}
    for choice in extractors:
        extractor = default_extractor(choice)
        if extractor is None:
            raise InvalidInput("bench entities measures an extractor: rules or spacy, not off")
        counts: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
        examples: dict[str, list[str]] = defaultdict(list)
        for name, path in files.items():
            for conversation in locomo.load(path):
                turns = {k[2] for k in gold if k[0] == name and k[1] == conversation.get("sample_id")}
                if turns:
                    found = _found(extractor, conversation, turns, assistant)
                    for turn in sorted(turns):
                        _score(gold[(name, conversation["sample_id"], turn)], found[turn], counts[name], examples,
                               f"{conversation['sample_id']} {turn}")
        out["extractors"][extractor.name] = {
            "sets": {name: _figures(c) for name, c in counts.items()},
            "overall": _figures(_summed(list(counts.values()))),
            "misses": {k: v[:40] for k, v in examples.items()},
        }
    return out


def _found(
    extractor: Extractor, conversation: dict[str, Any], turns: set[str], assistant: str,
) -> dict[str, tuple[Mention, ...]]:
    """The mentions of the asked turns, topics only where MIN_TOPIC_NOTES turns of the conversation mention them."""
    notes = locomo.turns(conversation)
    mentions = extract(extractor, notes, assistant=assistant)
    recurring = Counter(m.key for found in mentions for m in found if m.kind == "topic")
    return {
        str(note.source): tuple(m for m in found if m.kind != "topic" or recurring[m.key] >= MIN_TOPIC_NOTES)
        for note, found in zip(notes, mentions, strict=True) if note.source in turns
    }


def _words(name: str, kind: str) -> tuple[str, ...]:
    return tuple(entity_key(name, kind="topic" if kind == "topic" else "person").split())


def _matches(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    short, long = sorted((a, b), key=len)
    return bool(short) and any(long[i : i + len(short)] == short for i in range(len(long) - len(short) + 1))


def _score(
    gold: Sequence[tuple[str, str]], found: Sequence[Mention], counts: dict[str, Counter[str]],
    examples: dict[str, list[str]], where: str,
) -> None:
    """Counts true positives, found and gold per kind, per NAMED (kinds ignored among named ones) and per topic."""
    for group, in_group in ((NAMED, lambda k: k != "topic"), *((k, lambda k, kind=k: k == kind) for k in ENTITY_KINDS)):
        wanted = [_words(n, k) for n, k in gold if in_group(k)]
        got = [(_words(m.name, m.kind), m.name) for m in found if in_group(m.kind)]
        left = list(wanted)
        for words, name in got:
            hit = next((w for w in left if _matches(w, words)), None)
            if hit is not None:
                left.remove(hit)
                counts[group]["tp"] += 1
            elif group in (NAMED, "topic"):
                examples[f"{group} false"].append(f"{where}: {name}")
        counts[group]["found"] += len(got)
        counts[group]["gold"] += len(wanted)
        if group in (NAMED, "topic"):
            examples[f"{group} missed"] += [f"{where}: {' '.join(w)}" for w in left]


def _summed(sets: Sequence[dict[str, Counter[str]]]) -> dict[str, Counter[str]]:
    total: dict[str, Counter[str]] = defaultdict(Counter)
    for counts in sets:
        for group, c in counts.items():
            total[group].update(c)
    return total


def _figures(counts: dict[str, Counter[str]]) -> dict[str, dict[str, Any]]:
    out = {}
    for group in (NAMED, *ENTITY_KINDS):
        c = counts.get(group, Counter())
        if not c["gold"] and not c["found"]:
            continue
        # A found mention matches at most one gold one, so tp is bounded by both counts.
        precision = c["tp"] / c["found"] if c["found"] else None
        recall = c["tp"] / c["gold"] if c["gold"] else None
        out[group] = {"precision": _r(precision), "recall": _r(recall), "found": c["found"], "gold": c["gold"]}
    return out


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def spacy_installed() -> bool:
    return model_path() is not None
