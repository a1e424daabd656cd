"""A small tenant with everything the viewer shows: session order, a hand-made link, a note changed after a known
moment, a superseded fact, a note whose text is markup, and another tenant beside it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from amem_graph import AgenticMemory
from amem_graph.core.validation import now

HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> Alice paints on Sundays'


@dataclass(frozen=True)
class Sample:
    dog: str  # changed after `before`: "Max" became "Maximus"
    shoes: str  # ELABORATES the dog note
    vet: str  # outside the session; SUPPORTS the shoes note
    hostile: str
    old_home: str  # superseded by new_home
    new_home: str  # recorded after `before`
    archived: str  # archived by retention
    other: str  # another tenant's note
    other_tenant: str
    before: datetime


def sample(memory: AgenticMemory, open_memory: Callable[[str], AgenticMemory]) -> Sample:
    dog = memory.add("Alice adopted a beagle named Max in May 2023.", session="s1")
    shoes = memory.add("Max chewed Alice's running shoes.", session="s1")
    memory.link(shoes.id, dog.id, "ELABORATES", reason="the dog that chewed them", confidence=0.9)
    hostile = memory.add(HOSTILE, session="s1")
    vet = memory.add("The vet said the dog needs longer walks.")
    memory.link(vet.id, shoes.id, "SUPPORTS", reason="why it chews things", confidence=0.9)
    old_home = memory.add("Alice lives in Boston.")
    archived = memory.add("Alice once kept a goldfish.")
    memory.retention.archive([archived.id])
    time.sleep(0.01)  # times are kept to the millisecond: `before` lies strictly between the two states
    before = now()
    time.sleep(0.01)
    memory.update(dog.id, content="Alice adopted a beagle named Maximus in May 2023.", reason="the dog's full name")
    new_home = memory.add("Alice moved to Denver.")
    memory.supersede(old_home.id, new_home.id, reason="she moved to Denver")
    other_tenant = memory.tenant + "-other"
    with open_memory(other_tenant) as other_memory:
        other = other_memory.add("Bob keeps a secret diary about Alice's beagle.")
    return Sample(dog.id, shoes.id, vet.id, hostile.id, old_home.id, new_home.id, archived.id, other.id, other_tenant, before)
