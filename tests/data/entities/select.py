"""Draws again the turns of the entity gold set (gold.jsonl) from the development sets: blocks of consecutive turns,
one block per conversation, session and start drawn with random.Random(58). Prints set, conversation and turn ids.

    python tests/data/entities/select.py ../shared/data
"""

import json
import random
import sys
from pathlib import Path

SETS = {"locomo": ("locomo/locomo-dev.json", 17), "realtalk": ("realtalk/realtalk-dev.json", 25),
        "beam": ("beam/beam-dev.json", 10)}


def main(data: Path) -> None:
    rng = random.Random(58)
    for name, (path, block) in SETS.items():
        for conversation in json.loads((data / path).read_text(encoding="utf-8")):
            dialogue = conversation["conversation"]
            sessions = sorted((k for k in dialogue if k.startswith("session_") and not k.endswith("date_time")),
                              key=lambda k: int(k.split("_")[1]))
            session = rng.choice([s for s in sessions if len(dialogue[s]) >= block])
            start = rng.randrange(0, len(dialogue[session]) - block + 1)
            for turn in dialogue[session][start:start + block]:
                print(name, conversation["sample_id"], turn["dia_id"])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
