"""docs/DESIGN.md stays true to the code and to the seeds.

- every property ``check``, ``oracle``, ``assign`` or ``verify`` can print has a section there
  (a heading naming it in backticks) with at least one seed quote (a ``> `` line);
- every quote is in a seed document, word for word (whitespace of the wiki export collapsed):
  checked against the seed files in ``/work/shared/seeds`` when they are there;
- every reference to the design document in the repository says ``docs/DESIGN.md``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from rebalproof.properties.catalogue import PER_ASSIGNMENT
from rebalproof.properties.run import RUN_PROPERTIES

ROOT = Path(__file__).resolve().parent.parent
DESIGN = ROOT / "docs" / "DESIGN.md"
SEEDS = ROOT.parent / "shared" / "seeds"

#: Findings about an assignor that ``check`` prints besides the run properties.
FINDINGS = ("equivariance",)


def _printed_names() -> list[str]:
    return [p.name for p in PER_ASSIGNMENT] + [p.name for p in RUN_PROPERTIES] + list(FINDINGS)


def _sections() -> dict[str, list[str]]:
    """Heading text -> the lines under it, up to the next heading of any level."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in DESIGN.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            current = line.lstrip("#").strip()
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return sections


def _quotes(lines) -> list[str]:
    """The block quotes of ``lines``, one string per quote (consecutive ``>`` lines joined)."""
    quotes, block = [], []
    for line in list(lines) + [""]:
        stripped = line.strip()
        if stripped.startswith(">"):
            block.append(stripped[1:].strip())
        elif block:
            quotes.append(" ".join(block))
            block = []
    return quotes


def _normal(text: str) -> str:
    return " ".join(text.replace("\u00a0", " ").split())


@pytest.mark.parametrize("name", _printed_names())
def test_every_printed_property_has_a_section_with_a_seed_quote(name):
    sections = _sections()
    headings = [h for h in sections if re.match(rf"`{re.escape(name)}`(\s|$)", h)]
    assert headings, f"docs/DESIGN.md has no section for the property {name!r} (a heading starting with `{name}`)"
    for heading in headings:
        body = sections[heading]
        assert _quotes(body), f"docs/DESIGN.md section {heading!r} quotes no seed sentence"
        text = "\n".join(body)
        for part in ("**Definition", "**Seed."):
            assert part in text, f"docs/DESIGN.md section {heading!r} has no {part.strip('*')} paragraph"


def test_the_catalogue_names_match_the_code():
    """No section for a property the code does not have (a renamed property leaves none behind)."""
    known = set(_printed_names())
    for heading in _sections():
        match = re.match(r"`([a-z-]+)`", heading)
        if match:
            assert match.group(1) in known, f"docs/DESIGN.md has a section for {match.group(1)!r}, which no command prints"


def test_every_quote_is_in_a_seed_word_for_word():
    if not SEEDS.is_dir():
        pytest.skip(f"the seed documents are not in {SEEDS}")
    seeds = " ".join(_normal(p.read_text(encoding="utf-8")) for p in sorted(SEEDS.glob("*.txt")))
    quotes = _quotes(DESIGN.read_text(encoding="utf-8").splitlines())
    assert len(quotes) >= len(_printed_names())
    missing = [q for q in quotes if _normal(q) not in seeds]
    assert not missing, "quotes not found in the seeds:\n" + "\n".join(missing)


def _repo_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\n")
    return [ROOT / name for name in listed if name and (ROOT / name).is_file()]


def test_design_md_is_only_referred_to_as_docs_design_md():
    wrong = []
    for path in _repo_files():
        if path == Path(__file__).resolve() or path.suffix in {".gz", ".png", ".parquet"}:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            for match in re.finditer(r"[\w./-]*DESIGN\.md", line):
                if match.group(0) != "docs/DESIGN.md":
                    wrong.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not wrong, "references to DESIGN.md that are not docs/DESIGN.md:\n" + "\n".join(wrong)


def test_readme_links_the_design():
    assert "docs/DESIGN.md" in (ROOT / "README.md").read_text(encoding="utf-8")
