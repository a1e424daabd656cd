"""English word forms: which parts of speech a word form can be, each with its dictionary form, from
lemminflect's lookup table (about 80,000 forms of nouns, verbs, adjectives and adverbs).

The table is read from the installed package's files without importing the package: importing lemminflect
imports spaCy when spaCy is installed (to register its extensions), which would load spaCy, and through it torch,
into every process that tags a word."""

from __future__ import annotations

import gzip
import importlib.util
from functools import cache, lru_cache
from pathlib import Path

_PARTS = {"noun": "NOUN", "verb": "VERB", "adj": "ADJ", "adv": "ADV", "aux": "AUX"}


def _folder() -> Path:
    spec = importlib.util.find_spec("lemminflect")  # finding a package runs none of its code
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("lemminflect is not installed: pip install amem-graph (it is a core dependency)")
    return Path(next(iter(spec.submodule_search_locations))) / "resources"


@cache
def _table() -> dict[str, dict[str, tuple[str, ...]]]:
    """Form → part of speech → dictionary forms. Proper nouns keep their capitals ("Aaron"), so a lower-case form
    is an ordinary word."""
    folder = _folder()
    lines = gzip.decompress((folder / "lemma_lu.csv.gz").read_bytes()).decode("utf-8").splitlines()
    lines += [line for line in (folder / "lemma_overrides.csv").read_text(encoding="utf-8").splitlines()
              if line and not line.startswith("#")]
    table: dict[str, dict[str, tuple[str, ...]]] = {}
    for line in lines:
        form, part, lemma = line.split(",", 2)
        parts = table.setdefault(form, {})
        name = _PARTS.get(part.lower(), part)
        parts[name] = parts.get(name, ()) + tuple(x for x in lemma.split("/") if x not in parts.get(name, ()))
    return table


@lru_cache(maxsize=1 << 16)
def readings(word: str) -> dict[str, tuple[str, ...]]:
    """The parts of speech a word form can be (NOUN, VERB, ADJ, ADV), each with its dictionary forms ({} for a
    word the table does not hold: a name, a brand, slang or a typo). Case matters: the table is lower case."""
    return _table().get(word, {})
