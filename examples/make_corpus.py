"""Regenerate the stored answers and corpora of the examples from the example assignors.

Run from the repository root::

    python examples/make_corpus.py

- ``answers/<assignor>-<input>.json``: the answer of each JavaScript example to each input in
  ``inputs/`` (what ``rebalproof assign --no-check`` prints);
- ``corpus/<assignor>.jsonl``: for each input, the answers of ``ROUNDS`` rebalances in a row,
  each fed back as the next input with its restores finished
  (:func:`rebalproof.properties.metamorphic.feed_back`), one ``{"name", "input", "output"}``
  record per line, for ``rebalproof oracle --corpus``.

``tests/test_examples.py`` checks that the stored files are what this script writes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rebalproof.model.assignors.spec import resolve
from rebalproof.model.codec import decode_input, encode_assignment, encode_input, read_json
from rebalproof.properties.metamorphic import feed_back

HERE = Path(__file__).resolve().parent
ASSIGNORS = {"ha": "ha_assignor.js", "rotating": "rotating_assignor.js"}
ROUNDS = 3


def spec(name: str) -> str:
    return f"exec:node {HERE / ASSIGNORS[name]}"


def inputs() -> dict[str, dict]:
    return {p.stem: read_json(p, what="input") for p in sorted((HERE / "inputs").glob("*.json"))}


def answers(name: str) -> dict[str, dict]:
    """Input stem -> the assignor's answer (JSON), one call each."""
    with resolve(spec(name)) as assignor:
        return {stem: encode_assignment(assignor(decode_input(obj))) for stem, obj in inputs().items()}


def corpus(name: str) -> list[dict]:
    """The records of ``ROUNDS`` fed-back rebalances from each input."""
    records = []
    with resolve(spec(name)) as assignor:
        for stem, obj in inputs().items():
            view = decode_input(obj)
            for round_ in range(1, ROUNDS + 1):
                answer = assignor(view)
                records.append({"name": f"{stem} round {round_}", "input": encode_input(view), "output": encode_assignment(answer)})
                view = feed_back(view, answer)
    return records


def files() -> dict[Path, str]:
    """Every file this script writes, with its text."""
    out = {}
    for name in ASSIGNORS:
        for stem, answer in answers(name).items():
            out[HERE / "answers" / f"{name}-{stem}.json"] = json.dumps(answer, indent=2) + "\n"
        out[HERE / "corpus" / f"{name}.jsonl"] = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in corpus(name))
    return out


def main() -> int:
    for path, text in files().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(path.relative_to(HERE.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
