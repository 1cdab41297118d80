"""How well our sentence splitter fits what the LELMA judges quoted, and how fast the parser reads the 180 logs.

Usage: ``python bench/reasoning_sentences.py [path/to/shared/data/lelma]``. Prints figures; asserts nothing.
A judge's quoted sentence (quotes and emphasis stripped) counts as "exact" when it equals one of our sentences of
the first or last RESPONSE, "inside" when it lies within one, "run" when it lies within 2-4 consecutive sentences.
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.reasoning.games import GAMES  # noqa: E402
from backend.reasoning.logs import read_log_folder, split_sentences  # noqa: E402
from backend.reasoning.protocol import read_protocol_form, split_hash_field  # noqa: E402


def _normalise(text: str) -> str:
    return re.sub(r"[\s*]+", " ", text.strip().strip("\"“”‘’'").strip()).strip()


def main(folder: Path) -> None:
    start = time.perf_counter()
    logs = {}
    for model_folder in sorted((folder / "logs").iterdir()):
        found, errors = read_log_folder(model_folder, games=GAMES)
        logs.update({log.filename: log for log in found})
    elapsed = time.perf_counter() - start
    print(f"parsed {len(logs)} logs in {elapsed * 1000:.0f} ms ({elapsed / max(len(logs), 1) * 1000:.2f} ms per log)")

    counts: Counter = Counter()
    for form in sorted((folder / "evaluation_forms").glob("*.csv")):
        for row in read_protocol_form(form).itertuples():
            log = logs[row.file]
            sentences = [
                _normalise(s) for a in (log.attempts[0], log.attempts[-1]) for s in split_sentences(a.response)
            ]
            for quote in map(_normalise, split_hash_field(row.sentence)):
                if not quote:
                    continue
                if quote in sentences:
                    counts["exact"] += 1
                elif any(quote in sentence for sentence in sentences):
                    counts["inside"] += 1
                elif any(quote in " ".join(sentences[i : i + k]) for k in (2, 3, 4) for i in range(len(sentences))):
                    counts["run"] += 1
                else:
                    counts["none"] += 1
    total = sum(counts.values())
    print(f"judges' quoted sentences: {total}")
    for key in ("exact", "inside", "run", "none"):
        print(f"  {key:6s} {counts[key]:4d}  {counts[key] / total:.1%}")


if __name__ == "__main__":
    default = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "lelma"
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    if not target.is_dir():
        sys.exit(f"LELMA data not found at {target}")
    main(target)
