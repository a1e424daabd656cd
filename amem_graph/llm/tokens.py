"""Token counting where an endpoint reports no usage, and for the scripted test server.

The tokenizer is o200k_base, the BPE of OpenAI's GPT-4o family, from `bpe-openai`, which carries the
vocabulary in the package: counting never downloads anything. Other models' tokenizers differ by a
few percent on English text.
"""

from __future__ import annotations

from functools import cache

import bpe_openai

TOKENIZER = "o200k_base"


@cache
def _encoding() -> bpe_openai.Encoding:
    return bpe_openai.get_encoding(TOKENIZER)


def count_tokens(text: str) -> int:
    return len(_encoding().encode_ordinary(text))  # user text may contain "<|endoftext|>": count it as text
