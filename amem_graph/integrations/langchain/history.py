"""LangChain chat history on the memory: each message becomes a note of its session (analysed and linked
like any other), and, with `turns=True`, each user/assistant exchange also a MemoryOS page."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, message_to_dict, messages_from_dict

from ...api import AgenticMemory
from ...core import validation
from ...errors import InvalidInput
from ...models import Attachment, NoteInput
from .values import to_json

KIND = "chat"
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
    name, tool calls, additional kwargs and all).

    A message is checked, written as a note, then its original is attached to the note; a message longer
    than AMEM_MAX_CONTENT_CHARS is kept whole, its note holds the beginning. Re-adding a message with
    the same id adds nothing. `analyse=False` writes a batch without analysis, in transactions of
    AMEM_WRITE_BATCH_SIZE notes (`amem-graph reanalyze` can analyse them later). `clear()` deletes the
    session's message notes; pages and persona facts the tiers learnt from them stay.

    With `as_of` (a recorded time: a datetime or an ISO-8601 string), the history is a read-only view of the
    session as it stood then: the messages added by then. A cleared message is erased from every time.
    Adding or clearing on the view raises InvalidInput and writes nothing.
    """

    def __init__(
        self, memory: AgenticMemory, session_id: str, *, tenant: str | None = None, analyse: bool = True,
        turns: bool = False, as_of: datetime | str | None = None,
    ) -> None:
        self.memory = memory
        self.session_id = validation.labels([session_id], "session_id")[0]
        self.tenant = validation.tenant(memory.tenant if tenant is None else tenant)
        self.analyse = analyse
        self.turns = turns
        self.as_of = validation.event_time(as_of, "as_of")

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        stored = self.memory.attachments.in_session(self.tenant, KIND, self.session_id, as_of=self.as_of)
        return messages_from_dict([json.loads(a.attached or "{}") for a in stored])

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self._writable()
        max_chars = self.memory.settings.max_content_chars
        items = [  # every message is checked before any is written
            (message_text(m)[:max_chars], to_json(message_to_dict(m), f"message {n}"), m)
            for n, m in enumerate(messages)
        ]
        earlier = self.messages if self.turns else []
        if self.analyse:
            for text, attached, message in items:
                note = self.memory.add(text, tenant=self.tenant, **self._note_fields(message))
                self.memory.attachments.attach(self.tenant, KIND, [Attachment(note.id, attached)])
        else:
            inputs = [NoteInput(content=text, **self._note_fields(m)) for text, _, m in items]
            ids = self.memory.add_many(inputs, tenant=self.tenant)
            attachments = [Attachment(i, attached) for i, (_, attached, _) in zip(ids, items, strict=True)]
            self.memory.attachments.attach(self.tenant, KIND, attachments)
        if self.turns:
            self._add_turns(earlier, [m for _, _, m in items])

    def _note_fields(self, message: BaseMessage) -> dict[str, str]:
        # A message id makes re-adding the same message a no-op (same source, same text); without one,
        # two equal messages ("ok", "ok") are two messages.
        return {
            "source": f"chat:{self.session_id}:{message.id or uuid.uuid4().hex}",
            "session": self.session_id,
            "speaker": message.name or _SPEAKERS.get(message.type, message.type),
        }

    def _add_turns(self, earlier: Sequence[BaseMessage], added: Sequence[BaseMessage]) -> None:
        """Each user message with the assistant's answer after it becomes a page; the user message still
        waiting for its answer may be in `earlier` (added by another call, or another instance)."""
        waiting = None
        for message in earlier:
            waiting = _waiting_after(waiting, message)
        for message in added:
            if isinstance(message, HumanMessage) and waiting is not None:  # two in a row: no answer came
                self.memory.add_turn(waiting, "", tenant=self.tenant, session_id=self.session_id)
            elif isinstance(message, AIMessage) and message.text.strip() and waiting is not None:
                self.memory.add_turn(waiting, message.text, tenant=self.tenant, session_id=self.session_id)
            waiting = _waiting_after(waiting, message)

    def clear(self) -> None:
        self._writable()
        # By source, so that a note whose attachment failed to be written goes too.
        for note_id in self.memory.attachments.session_notes(self.tenant, self.session_id, f"chat:{self.session_id}:"):
            self.memory.delete(note_id, tenant=self.tenant)

    def _writable(self) -> None:
        if self.as_of is not None:
            raise InvalidInput(f"this chat history is a read-only view as of {self.as_of.isoformat()}: add and clear "
                               "on one without as_of")


def _waiting_after(waiting: str | None, message: BaseMessage) -> str | None:
    """The user message waiting for an answer once `message` is said."""
    if isinstance(message, HumanMessage):
        return message_text(message)
    if isinstance(message, AIMessage) and message.text.strip():
        return None
    return waiting
