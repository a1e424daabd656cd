"""LangChain chat history on the memory: each message becomes a note of its session (analysed and linked
like any other), and, with `turns=True`, each user/assistant exchange also a MemoryOS page."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, message_to_dict, messages_from_dict

from ... import validation
from ...api import AgenticMemory
from ...models import NoteInput
from ...store.base import Attachment

_SPEAKERS = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def message_text(message: BaseMessage) -> str:
    """What a message's note says: its text, else the tool calls it makes (a note is never empty)."""
    if text := message.text.strip():
        return text
    calls = getattr(message, "tool_calls", None) or []
    if calls:
        return "; ".join(f"called {c['name']}({json.dumps(c['args'], ensure_ascii=False)})" for c in calls)
    return f"({message.type} message without text)"


class AmemChatMessageHistory(BaseChatMessageHistory):
    """The messages of one session, kept as notes; `messages` gives them back exactly as added (id, type,
    tool calls, additional kwargs and all).

    `analyse=False` writes a batch in one transaction without analysis (`amem-graph reanalyze` can
    analyse it later). `clear()` deletes the session's message notes; pages and persona facts the tiers
    learnt from them stay.
    """

    def __init__(
        self, memory: AgenticMemory, session_id: str, *, tenant: str | None = None, analyse: bool = True,
        turns: bool = False,
    ) -> None:
        self.memory = memory
        self.session_id = validation.labels([session_id], "session_id")[0]
        self.tenant = validation.tenant(memory.tenant if tenant is None else tenant)
        self.analyse = analyse
        self.turns = turns
        self._waiting: str | None = None  # a user message whose answer has not come yet (turns=True)

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        stored = self.memory.store.attached_in_session(self.tenant, self.session_id)
        return messages_from_dict([json.loads(a.attached) for a in stored])

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        max_chars = self.memory.settings.max_content_chars
        items = [  # every message is checked before any is written
            (validation.text(message_text(m), "message", max_chars), json.dumps(message_to_dict(m)), m)
            for m in messages
        ]
        if self.analyse:
            for text, attached, message in items:
                note = self.memory.add(text, tenant=self.tenant, **self._note_fields(message))
                self.memory.store.attach(self.tenant, [Attachment(note.id, attached)])
        else:
            inputs = [NoteInput(content=text, **self._note_fields(m)) for text, _, m in items]
            ids = self.memory.add_many(inputs, tenant=self.tenant)
            self.memory.store.attach(self.tenant, [Attachment(i, a) for i, (_, a, _) in zip(ids, items, strict=True)])
        if self.turns:
            self._add_turns([m for _, _, m in items])

    def _note_fields(self, message: BaseMessage) -> dict[str, str]:
        # A message id makes re-adding the same message a no-op (same source, same text); without one,
        # two equal messages ("ok", "ok") are two messages.
        key = message.id or uuid.uuid4().hex
        return {
            "source": f"chat:{self.session_id}:{key}",
            "session": self.session_id,
            "speaker": message.name or _SPEAKERS.get(message.type, message.type),
        }

    def _add_turns(self, messages: Sequence[BaseMessage]) -> None:
        for message in messages:
            if isinstance(message, HumanMessage):
                if self._waiting is not None:  # two user messages in a row: the first had no answer
                    self.memory.add_turn(self._waiting, "", tenant=self.tenant, session_id=self.session_id)
                self._waiting = message_text(message)
            elif isinstance(message, AIMessage) and message.text.strip() and self._waiting is not None:
                self.memory.add_turn(self._waiting, message.text, tenant=self.tenant, session_id=self.session_id)
                self._waiting = None

    def clear(self) -> None:
        for stored in self.memory.store.attached_in_session(self.tenant, self.session_id):
            self.memory.delete(stored.note.id, tenant=self.tenant)
        self._waiting = None
