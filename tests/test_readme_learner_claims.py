"""README.md's claims about the KIP-429 learner rules, executed: each command it shows, with the
exit code and the properties it names.

The commands are read from README.md itself (a ``$ rebalproof check`` line, continued with
``\\``, then its output up to the closing fence), so the text cannot drift from what runs.
"""

from __future__ import annotations

import json
import re
import shlex

import pytest

from rebalproof.cli.main import main

from conftest import ROOT

README = (ROOT / "README.md").read_text()
FEW = "--instances 3 --initial 2 --subtopologies 1 --partitions 2 --standbys 0 --events 1"


def readme_commands() -> dict[str, str]:
    """``rebalproof check ...`` command (continuations joined) -> the output shown under it."""
    out = {}
    blocks, current = [], None
    for line in README.splitlines():
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.append(line)
    for lines in blocks:
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("$ rebalproof check"):
                command = line[2:]
                while command.rstrip().endswith("\\"):
                    i += 1
                    command = command.rstrip()[:-1] + " " + lines[i].strip()
                shown = []
                while i + 1 < len(lines) and not lines[i + 1].startswith("$ "):
                    i += 1
                    shown.append(lines[i])
                out[" ".join(command.split("#")[0].split())] = "\n".join(shown)
            i += 1
    return out


COMMANDS = readme_commands()


def run(command: str, capsys) -> tuple[int, dict]:
    argv = shlex.split(command)[1:]
    code = main([*argv, "--json"])
    report = json.loads(capsys.readouterr().out)
    return code, {p["property"]: p["status"] for p in report["properties"]}


def shown_command(*needles: str) -> str:
    found = [c for c in COMMANDS if all(n in c for n in needles)]
    assert len(found) == 1, (needles, list(COMMANDS))
    return found[0]


def test_the_v1_rule_removes_the_naive_shuffling_within_the_same_bounds(capsys):
    naive = shown_command("learner-naive", "--trace-dir")
    v1 = shown_command("learner-naive:learners_to=new")
    assert FEW in " ".join(naive.split()) and FEW in " ".join(v1.split())
    code, verdicts = run(re.sub(r" --trace-dir \S+", "", naive), capsys)
    assert code == 1 and verdicts["no-shuffle-cycle"] == verdicts["converges"] == "violated"
    code, verdicts = run(v1, capsys)
    assert code == 0 and COMMANDS[v1].splitlines()[-1].startswith("ok: every promised property holds")
    for witness in ("task-moves", "warmup-assigned", "warmup-promoted", "learner-ready"):
        assert verdicts[witness] == "holds", witness  # not vacuous: learners are assigned and promoted
    assert verdicts["no-shuffle-cycle"] == verdicts["converges"] == "holds"


def test_the_builtin_v1_at_those_bounds_is_vacuous_and_has_no_leaving_tag(capsys):
    """The README's sentences: witnesses "never happen" (inconclusive: exit 0, or 1 with
    --require-complete) and scale-down-completes is violated."""
    assert "at these bounds (2 tasks, 3 one-thread instances) it never moves a task" in README
    assert "exit 0, or 1 with\n`--require-complete`" in README
    code, verdicts = run(f"rebalproof check --protocol learner --assignor learner:version=1 {FEW}", capsys)
    assert code == 1
    assert verdicts["scale-down-completes"] == "violated"
    for witness in ("task-moves", "warmup-assigned", "warmup-promoted", "learner-ready"):
        assert verdicts[witness] == "inconclusive", witness
    assert verdicts["no-shuffle-cycle"] == verdicts["converges"] == "holds"
    code, verdicts = run(f"rebalproof check --protocol learner:leaving=false --assignor learner:version=1 {FEW}", capsys)
    assert code == 0 and verdicts["scale-down-completes"] == "not promised"  # only the vacuity is left
    assert {v for v in verdicts.values()} == {"holds", "inconclusive", "not promised"}
    code, _ = run(f"rebalproof check --protocol learner:leaving=false --assignor learner:version=1 {FEW} --require-complete", capsys)
    assert code == 1


@pytest.mark.parametrize("needle", ["learner:leaving=false --assignor learner:version=1"])
def test_the_builtin_v1_on_its_own_protocol_holds(needle, capsys):
    command = shown_command(needle)
    code, verdicts = run(command, capsys)
    assert code == 0 and COMMANDS[command].splitlines()[-1].startswith("ok: every promised property holds")
    for witness in ("task-moves", "warmup-assigned", "warmup-promoted", "learner-ready"):
        assert verdicts[witness] == "holds", witness
