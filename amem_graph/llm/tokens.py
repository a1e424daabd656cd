"""Token counting where an endpoint reports no usage, and for the scripted test server.

The tokenizer is the WordPiece tokenizer of all-MiniLM-L6-v2 (the bert-base-uncased vocabulary) that
ships with the embedder package, so counting never downloads anything. It is not the tokenizer of any
particular chat model; figures counted with it are labelled as such (see BENCHMARKS.md).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from tokenizers import Tokenizer

from ..embedding import resolve_model
from ..settings import DEFAULT_MODEL

TOKENIZER = "all-MiniLM-L6-v2 WordPiece (bert-base-uncased vocabulary)"


@cache
def _tokenizer() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(Path(resolve_model(DEFAULT_MODEL)) / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)
