"""Files the package ships beside its code: in an installed wheel they sit inside the package (force-included),
in a source checkout or an editable install at the repository's top."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from ..errors import AmemError

_PACKAGE = Path(__file__).resolve().parents[1]


@cache
def shipped(packaged: str, source: str) -> Path:
    """`packaged` inside the package, else `source` in the checkout; AmemError if the installation lacks both."""
    for candidate in (_PACKAGE / packaged, _PACKAGE.parent / source):
        if candidate.exists():
            return candidate
    raise AmemError(f"{Path(packaged).name} is missing (looked at {_PACKAGE / packaged} and "
                    f"{_PACKAGE.parent / source}): the installation is incomplete, reinstall amem-graph")


def cypher_folder() -> Path:
    """The Cypher statements (`cypher/`), the Browser's saved queries and style among them."""
    return shipped("cypher", "cypher")


def sample_conversation() -> Path:
    """The sample conversation `amem-graph demo` ingests."""
    return shipped("samples/sample-conversation.jsonl", "notebooks/sample-conversation.jsonl")
