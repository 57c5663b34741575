"""Malformed answers are findings wherever an assignor answers (issue #10, v-check item 3).

A task twice for one member, an unknown member or task, a missing member, a role out of place:
``assign`` and ``check`` (and so ``verify``) report a finding or a violated property with the
input, exit 1, never exit 2; the corpus's malformed answers are tested in test_corpus.py. Exit 2
stays for the user's own mistakes, such as an input with no members.
"""

from __future__ import annotations

import json

import pytest

from rebalproof.cli.main import main

from conftest import ROOT

SCALE_OUT = str(ROOT / "examples" / "inputs" / "scale_out.json")
SMALL = ["--subtopologies", "1", "--partitions", "2", "--events", "1", "--symmetry", "off"]


@pytest.fixture
def pyassignors(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "assignors"))


@pytest.mark.parametrize(
    "function, says",
    [
        ("twice", "violated: no-colocation: I1 holds 0_0 twice (active and warmup)"),
        ("unknown_task", "unknown task '9_9'"),
        ("unknown_member", "unknown member 'ghost'"),
        ("missing_member", "member 'I3' of the input is missing"),
        ("role_misplaced", "unknown field 'actives'"),
    ],
)
def test_assign_reports_a_malformed_answer_as_a_finding(pyassignors, capsys, function, says):
    code = main(["assign", "--assignor", f"py:pyassignors:{function}", SCALE_OUT])
    err = capsys.readouterr().err
    assert code == 1 and says in err and "error:" not in err


@pytest.mark.parametrize(
    "function, says",
    [
        ("twice", 'Discovered "no-colocation" counterexample'),
        ("unknown_task", "unknown task '9_9'"),
        ("missing_member", "is missing"),
        ("role_misplaced", "unknown field 'actives'"),
    ],
)
@pytest.mark.parametrize("start", ["warm", "cold"])
def test_check_reports_a_malformed_answer_as_a_finding(pyassignors, tmp_path, capsys, function, says, start):
    code = main(["check", "--assignor", f"py:pyassignors:{function}", *SMALL, "--start", start, "--trace-dir", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    assert says in captured.out and "error:" not in captured.err
    assert list(tmp_path.iterdir())  # the finding's input or the counterexample is saved


def test_an_input_with_no_members_is_the_users_mistake(tmp_path, capsys):
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"tasks": [{"id": "0_0"}], "members": []}))
    code = main(["assign", "--assignor", "ha", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "has no members" in err and "one-active" not in err
