"""README.md: every ``$ command`` in its code blocks is run, and gives what the README shows.

The README is read as a user reads it: each fenced block with ``$ `` lines is a shell session,
``$ command`` then what it prints. All commands run once, in document order, in one scratch folder
(``examples/``, ``tests/`` and ``traces/`` of the repository linked into it), so a later command
may read what an earlier one wrote, and nothing is written into the repository.

How a block is compared with the real output:

- ``...`` on a line of its own, or at the end of a line, stands for anything (doctest's
  ELLIPSIS): an excerpt that drops lines says so with ``...``; every other line is exact;
- figures that change from run to run by nature (seconds, states per second, peak RSS) are
  masked on both sides before comparing;
- ``# exit N`` after a command is the exit code it must have; without it, exit 0;
- the output compared is stdout, or stderr followed by stdout when the README shows what the
  command says on stderr (an error line, a finding).

``rebalproof`` commands run in-process (the CLI's ``main``, no interpreter start-up per
command); anything with shell syntax (``>``, ``cat``, ``$(...)``) runs in bash.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rebalproof.cli.main import main

from conftest import ROOT

README = ROOT / "README.md"
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.xdist_group("spark")  # the README runs Spark: with the other Spark tests, one session

_MASKS = (
    (re.compile(r"\b\d+(?:\.\d+)?s \([\d,]+ states/s\)"), "<seconds> (<rate> states/s)"),
    (re.compile(r"peak RSS [\d,.]+ MiB"), "peak RSS <rss> MiB"),
    (re.compile(r"\bin \d+\.\d+ s\b"), "in <seconds> s"),
    (re.compile(r"\b\d+\.\d+ s\b"), "<seconds> s"),
)


#: A Python value printed where words belong (JSON output says true/false/null).
_PYTHON_VALUE = re.compile(r"\bNone\b|\bTrue\b|\bFalse\b|<[\w.]+ object at 0x")


def _mask(text: str) -> str:
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text


def sessions(text: str) -> list[tuple[int, str, int, str]]:
    """``(line number, command, expected exit code, expected output)`` for every ``$`` line, in order."""
    out = []
    lines = text.splitlines()
    in_block, current = False, None
    for number, line in enumerate(lines, start=1):
        if line.startswith("```"):
            if in_block and current:
                out.append(current)
            in_block, current = not in_block, None
            continue
        if not in_block:
            continue
        if line.startswith("$ "):
            if current:
                out.append(current)
            current = [number, line[2:], []]
        elif current is not None:
            if current[1].endswith("\\") and not current[2]:
                current[1] = current[1][:-1].rstrip() + " " + line.strip()
            else:
                current[2].append(line)
    result = []
    for number, command, expected in out:
        match = re.search(r"\s+#\s*(.*)$", command)
        code = 0
        if match and not _quoted(command, match.start()):
            said = re.match(r"exit (\d+)", match.group(1))
            code = int(said.group(1)) if said else 0
            command = command[: match.start()]
        result.append((number, command.strip(), code, "\n".join(expected)))
    return result


def _quoted(command: str, index: int) -> bool:
    return command[:index].count('"') % 2 == 1


SESSIONS = sessions(README.read_text(encoding="utf-8"))

#: Commands not run here, each with the tests that check what the README shows of it instead.
NOT_RUN_HERE = {
    "rebalproof verify": "the whole default suite on Spark (minutes): its checks' states and verdicts are pinned by "
                         "tests/test_manifest.py and its expectations by tests/test_pipeline_verify.py; "
                         "test_readme_verify_table_is_the_default_suite below checks the table against the suite",
}
_LIMITS = ("stops after 25 s of wall time, so what it prints depends on the machine's speed by design; "
           "tests/test_limits.py sends the signal after a fixed number of states and checks the partial report, "
           "its exit 130 and the progress lines")
for _command in ("timeout -s INT 25 rebalproof check --instances 4 --subtopologies 2 --partitions 3 > o 2> e", "cat e", "tail -3 o"):
    NOT_RUN_HERE[_command] = _LIMITS


def _run(command: str, cwd: Path, env: dict) -> tuple[int, str, str]:
    words = shlex.split(command)
    plain = words and words[0] == "rebalproof" and not re.search(r"[<>|;&`]|\$\(", command)
    if plain:
        out, err = io.StringIO(), io.StringIO()
        here = os.getcwd()
        os.chdir(cwd)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(words[1:])
        finally:
            os.chdir(here)
        return code, out.getvalue(), err.getvalue()
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[int, tuple[int, str, str]]:
    """Every README command run once, in document order, in one scratch folder: line -> (code, out, err).

    Run all at once so that a command finds what the commands before it wrote, whatever order
    the tests themselves run in (pytest-xdist does not keep it).
    """
    where = tmp_path_factory.mktemp("readme")
    for name in ("examples", "tests", "traces"):
        (where / name).symlink_to(ROOT / name, target_is_directory=True)
    env = _env()
    return {number: _run(command, where, env) for number, command, _, _ in SESSIONS if command not in NOT_RUN_HERE}


def _env() -> dict:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", COLUMNS="80")
    for name in ("CI", "BUILD_NUMBER", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER"):
        env.pop(name, None)
    return env


def test_the_readme_has_sessions_and_every_exit_claim_is_parsed():
    assert len(SESSIONS) >= 20
    assert {code for _, _, code, _ in SESSIONS} >= {0, 1, 2}


@pytest.mark.parametrize("number, command, code, expected", SESSIONS, ids=[f"L{n}: {c[:60]}" for n, c, _, _ in SESSIONS])
def test_readme_command_gives_the_documented_output(results, number, command, code, expected):
    if command in NOT_RUN_HERE:
        pytest.skip(NOT_RUN_HERE[command])
    got_code, out, err = results[number]
    checker = doctest.OutputChecker()
    want = _mask(expected) + "\n" if expected else ""
    candidates = [out, err + out]
    matched = any(checker.check_output(want, _mask(text), doctest.ELLIPSIS) for text in candidates)
    assert matched, (
        f"README.md line {number} is out of date for: $ {command}\n--- documented\n{expected}\n"
        f"--- got (exit {got_code}; stderr: {err.strip()[-2000:]!r})\n{out}"
        "(run the command and copy its output into the README, marking dropped lines with ...)"
    )
    assert got_code == code, f"README.md line {number}: $ {command} exits {got_code}, the README says {code}\n{err}"
    leak = _PYTHON_VALUE.search(out + err)
    assert leak is None, f"README.md line {number}: $ {command} prints a Python value ({leak.group(0)!r}) where words belong"


def _block_of(command: str) -> str:
    return next(expected for _, c, _, expected in SESSIONS if c == command)


def test_readme_verify_table_is_the_default_suite():
    """The README's ``rebalproof verify`` output (not run here, see NOT_RUN_HERE) agrees with the suite.

    Checks in suite order; "expected findings" with the known violations exactly where the suite
    records them; the states of every check the manifest pins; the summary's counts; the
    per-rebalance table's assignors.
    """
    import tomllib

    from rebalproof.model.group_bounds import Bounds
    from rebalproof.pipeline.suite import DEFAULT_SUITE, load_suite

    suite = load_suite(DEFAULT_SUITE)
    lines = _block_of("rebalproof verify").splitlines()
    assert lines[0] == f"suite {suite.name}: {len(suite.checks)} model checks (spark)"
    rows = {}
    for line in lines[3 : 3 + len(suite.checks)]:
        name, states, exploration, rest = re.match(r"(\S+)\s+([\d,]+)\s+(\S+)\s+(.*)$", line).groups()
        rows[name] = (int(states.replace(",", "")), exploration, rest.strip())
    assert list(rows) == [c.name for c in suite.checks]
    # the table's rule: each column as wide as its widest cell (the README copies a real run's table)
    widths = [len(dashes) for dashes in lines[2].split("  ")]
    notes = [(re.split(r"\s{2,}", rest, maxsplit=1) + [""])[1] for _, _, rest in rows.values()]
    assert (widths[0], widths[-1]) == (max(len(name) for name in rows), max(len(note) for note in notes))
    findings = 0
    for check in suite.checks:
        known = sorted(p for p, e in check.known if e.status == "violated")
        findings += len(known)
        result = "expected findings  " + ", ".join(f"{p} (known)" for p in known) if known else "pass"
        assert rows[check.name][1:] == ("complete", result), check.name
    pinned = tomllib.loads((ROOT / "tests" / "manifest.toml").read_text(encoding="utf-8"))["model"]
    compared = 0
    for check in suite.checks:
        for row in pinned:
            same = (row.get("protocol"), row.get("assignor"), Bounds(**row.get("bounds", {})), row.get("symmetry", False))
            if same == (check.protocol, check.assignor, Bounds(**dict(check.bounds)), False) and "states" in row:
                assert rows[check.name][0] == row["states"], f"{check.name}: README {rows[check.name][0]}, manifest {row['states']}"
                compared += 1
    assert compared >= 1
    summary = lines[-1]
    assert summary.startswith(f"verify: ok: {len(suite.checks)} model checks, {findings} expected findings, 0 unexpected; "
                              f"{len(suite.rebalances.assignors)} assignors one rebalance at a time")
    header = next(line for line in lines if line.startswith("property "))
    assert header.split()[1:] == list(suite.rebalances.assignors)
