"""Passages: a note longer than the embedding model's window, cut into overlapping windows of the model's length,
so that every part of it has a vector (the model reads a text's first window and nothing after it)."""

from __future__ import annotations

from collections.abc import Sequence

OVERLAP = 0.25  # of a window, shared with the next one: a sentence cut by one window's edge is whole in the other


def spans(offsets: Sequence[tuple[int, int]], window: int, overlap: float = OVERLAP) -> list[tuple[int, int]]:
    """The character spans of the windows that follow the first, for a text whose tokens sit at `offsets`
    (character start and end of each); none for a text of at most `window` tokens. The first window is the
    note's own vector, so it is not repeated; the last window ends with the text."""
    if window < 1:
        raise ValueError(f"a window holds at least one token, got {window}")
    count = len(offsets)
    if count <= window:
        return []
    stride = max(1, window - int(window * overlap))
    out: list[tuple[int, int]] = []
    start = stride
    while True:
        end = min(start + window, count)
        out.append((offsets[start][0], offsets[end - 1][1]))
        if end == count:
            return out
        start += stride
