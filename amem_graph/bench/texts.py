"""Deterministic synthetic chat-like sentences, for benchmarks that must run anywhere without data."""

from __future__ import annotations

import random

_PEOPLE = ["Alice", "Bob", "Caroline", "Melanie", "Jon", "Gina", "Tim", "John", "Maria", "Joanna", "Nate", "Audrey",
           "Evan", "Sam", "Priya", "Kenji", "Lucia", "Omar", "Dana", "Theo"]
_ACTIVITIES = ["went hiking", "painted a sunset", "started pottery classes", "adopted a puppy", "ran a half marathon",
               "visited the aquarium", "baked sourdough bread", "joined a book club", "repaired an old bike",
               "volunteered at the shelter", "learned to play the violin", "planted tomatoes", "moved to a new flat",
               "took a photography course", "watched a jazz concert", "cooked a Thai curry", "went camping",
               "finished a novel", "signed up for a dance class", "launched a small online store"]
_PLACES = ["near the lake", "in Boston", "at the community center", "downtown", "in the mountains", "with friends",
           "at the beach", "in Paris", "at the local park", "with the kids", "after work", "at grandma's house"]
_TIMES = ["last weekend", "yesterday", "on Saturday", "two weeks ago", "this morning", "last summer", "in May",
          "over the holidays", "on my birthday", "last night"]
_FEELINGS = ["It was amazing.", "I felt so relaxed afterwards.", "Honestly it was harder than I expected.",
             "I can't wait to do it again!", "It reminded me of my childhood.", "My family loved it.",
             "It really helped with my stress.", "I learned a lot about myself.", "The weather was perfect.",
             "I was nervous at first but it went well."]


def sentences(n: int, seed: int = 7) -> list[str]:
    """n distinct chat turns of 15-30 words, e.g. "Alice: I went hiking near the lake last weekend. ..."."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        who = rng.choice(_PEOPLE)
        text = f"{who}: I {rng.choice(_ACTIVITIES)} {rng.choice(_PLACES)} {rng.choice(_TIMES)}. {rng.choice(_FEELINGS)}"
        if rng.random() < 0.5:
            text += f" Have you ever {rng.choice(_ACTIVITIES).split(' ', 1)[1]}?"
        out.append(f"{text} (#{i})")
    return out
