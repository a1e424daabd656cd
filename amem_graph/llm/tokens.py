"""Token counting where an endpoint reports no usage, and for the scripted test server.

The tokenizer is o200k_base, the BPE of OpenAI's GPT-4o family, from `bpe-openai`, which carries the
vocabulary in the package: counting never downloads anything. Other models' tokenizers differ by a
few percent on English text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

TOKENIZER = "o200k_base"


@cache
def _encoding() -> Any:
    import bpe_openai  # the `llm` extra, with the client that counts

    return bpe_openai.get_encoding(TOKENIZER)


def count_tokens(text: str) -> int:
    return len(_encoding().encode_ordinary(text))  # user text may contain "<|endoftext|>": count it as text


# OpenAI's documented accounting for chat models: each message costs its content plus 3 tokens of
# framing, and every reply is primed with 3 more.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_REPLY = 3


def count_prompt_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    return TOKENS_PER_REPLY + sum(TOKENS_PER_MESSAGE + count_tokens(m.get("content") or "") for m in messages)
