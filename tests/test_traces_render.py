"""``rebalproof show``: the seeds' own text form, line for line, and seed 002's tables.

A reader holds the output next to the seed: the lines checked here are compared verbatim with
the seed files in ``/work/shared/seeds`` (or the copies quoted in ``model/seeds429.py`` when the
seeds folder is not there), and every member line of every KIP-429 golden trace is compared,
in order, with the seed's own lines of that round. The two places where the seed's text
contradicts itself are listed, and each is quoted in the trace's comment.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rebalproof.cli.main import main
from rebalproof.model import seeds429
from rebalproof.traces.make_seeds import GOLDEN_NAMES, golden_path
from rebalproof.traces.render_table import render_table
from rebalproof.traces.render_text import group_ids, member_line, render_text
from rebalproof.traces.replay import load_trace
from rebalproof.traces.rounds import read_story

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"


def _seed_lines(name: str) -> list[str]:
    path = SEEDS / name
    if not path.exists():
        pytest.skip(f"the seed {name} is not in {SEEDS}")
    # the wiki export has no-break spaces in some lines ("--\u00a0I3\u00a0finishes ..."): read them as spaces
    return [line.replace("\u00a0", " ").rstrip() for line in path.read_text(encoding="utf-8").splitlines()]


def _show(name: str, *args: str, capsys) -> str:
    assert main(["show", str(golden_path(name)), *args]) == 0
    return capsys.readouterr().out


def test_scale_up_lines_match_seed_001_verbatim(capsys):
    seed = _seed_lines("001_cae4ac70bffb4682.txt")
    out = _show("kip429-scale-up", "--no-comments", capsys=capsys).splitlines()
    for line in (
        "Group stable state: S1[T1, T2], S2[T3, T4], S3[T5]",
        "#Second Rebalance",
        "New member S5 joins the group.",
        "S1 performs task assignments:",
        "\tS1(assigned: [T1, T2], revoked: [], learning: [])",
        "\tS4(assigned: [], revoked: [], learning: [T1])",
        "Member S4 finishes its replay and becomes ready, re-attempting to join the group.",
        "\tS2(assigned: [T4], revoked: [T3], learning: [])",
        "\tS5(assigned: [T3], revoked: [], learning: [])",
    ):
        assert line in out, f"show does not print {line!r}"
        # the seed has it, or has it followed by a // comment
        assert any(s == line or s.startswith(line + " //") for s in seed), f"seed 001 has no line {line!r}"
    # the join line of S1 in the second rebalance, with the seed's own comment after it
    assert "\tS1(assigned: [T2], revoked: [T1], learning: []) // T1 revoked because it's \"being learned\"" in seed
    assert "\tS1(assigned: [T2], revoked: [T1], learning: [])" in out


def test_leader_crash_lines_match_seed_001_verbatim(capsys):
    seed = _seed_lines("001_cae4ac70bffb4682.txt")
    before = _show("kip429-leader-crash-before-scaling", "--no-comments", capsys=capsys).splitlines()
    for line in ("S2 takes over the leader", "S2 performs task assignments:", "\tS3(assigned: [T1], revoked: [], learning: [])"):
        assert line in before and line in seed
    empty = _show("kip429-scale-up-from-empty", "--no-comments", capsys=capsys).splitlines()
    assert "Group empty state: unassigned tasks [T1, T2, T3, T4, T5]" in empty
    assert "Group empty state: unassigned tasks [T1, T2, T3, T4, T5]" in seed
    swap = _show("kip429-host-swap", "--no-comments", capsys=capsys).splitlines()
    line = "S1~S2 will shutdown themselves upon new assignment since there is no assigned task left."
    assert line in swap and line in seed


def _sections(narrative: str) -> tuple[list[str], list[str]]:
    """The seed's join lines and answer lines of one round (comments cut, whitespace trimmed)."""
    joined, answer, into = [], [], None
    for raw in narrative.splitlines():
        line = raw.split("//")[0].strip()
        if "join with following" in line:
            into = joined
        elif "performs task assignments" in line:
            into = answer
        elif into is not None and "(assigned:" in line:
            into.append(line)
    return joined, answer


#: (trace, round) -> why the text form differs from the seed's line (quoted in the trace's comment).
SEED_CONTRADICTIONS = {
    ("kip429-leader-crash-during-scaling", 2): "T5, T2",  # the seed lists S3's tasks out of order
    ("kip429-host-swap", 3): "revoked: [], learning: []",  # the seed drops the revoked tasks of S1, S2
}


@pytest.mark.parametrize("scenario", seeds429.SCENARIOS, ids=lambda s: s.name)
def test_every_member_line_matches_the_seed_round_by_round(scenario):
    name = f"kip429-{scenario.name}"
    trace = load_trace(golden_path(name))
    story = read_story(trace)
    assert [b.title for b in story.blocks] == [r.title for r in scenario.rebalances]
    for block, seed_round in zip(story.blocks, scenario.rebalances):
        seed_joined, seed_answer = _sections(seed_round.narrative)
        ours_answer = [member_line(m) for m in block.answer]
        ours_joined = [member_line(m) for m in block.joined]
        # join lines are shown exactly where the seed writes them
        assert block.show_joined == bool(seed_joined), (name, block.number)
        if seed_joined:
            assert ours_joined == seed_joined, (name, block.number)
        key = (name, block.number)
        if key in SEED_CONTRADICTIONS:
            assert ours_answer != seed_answer
            assert SEED_CONTRADICTIONS[key] in block.comment, f"{key}: the trace's comment must quote the seed"
        else:
            assert ours_answer == seed_answer, (name, block.number)


def test_kip441_tables_match_seed_002_lines(capsys):
    seed = _seed_lines("002_7432b538f26ac9fe.txt")
    out = _show("kip441-scaling-out", capsys=capsys).splitlines()
    for line in (
        "Stateful (active) Tasks := {T1, T2, T3}",
        "Standby Replicas := 1",
        "Instances := {I1, I2}",
        "-- New instance (I3) joins --",
        "First Rebalance (catching-up)",
        "-- I3 finishes catching up, another rebalance is triggered --",
        "Second Rebalance (stable state)",
    ):
        assert line in out and line in seed, line
    # the catching-up round: actives unchanged, I3 warms T1 and T3 up, a probing rebalance follows
    i = out.index("First Rebalance (catching-up)")
    assert out[i + 1 : i + 6] == [
        "         I1      I2      I3",
        "active   T1, T3  T2",
        "standby  T2      T1, T3",
        "warmup                   T1, T3",
        "(probing rebalance scheduled)",
    ]
    lagging = _show("kip441-scaling-in-2", capsys=capsys).splitlines()
    for line in ("-- One instance (I1) is brought down --", "-- I3 finishes restoring T4 --", "First Rebalance (catching-up)"):
        assert line in lagging and line in seed, line
    j = lagging.index("Second Rebalance (stable state)")
    assert lagging[j + 1 : j + 4] == ["         I2      I3", "active   T1, T2  T3, T4", "standby  T3, T4  T1, T2"]


@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_rendering_is_deterministic_and_both_forms_work(name):
    trace = load_trace(golden_path(name))
    assert render_text(trace) == render_text(load_trace(golden_path(name)))
    assert render_table(trace) == render_table(trace)
    text = render_text(trace, steps=True)
    assert "[step " in text
    assert render_text(trace, comments=False).count("// ") == 0


def test_show_forms_and_errors(tmp_path, capsys):
    table = _show("kip429-scale-up", "--form", "table", capsys=capsys)
    assert "Initial State" in table and "warmup" in table
    text = _show("kip441-scaling-out", "--form", "text", capsys=capsys)
    assert "I1 performs task assignments:" in text
    assert "\tI3(assigned: [], revoked: [], learning: [T1, T3])" in text
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"format": "other"}), encoding="utf-8")
    assert main(["show", str(bad)]) == 2
    assert 'format" must be "rebalproof-trace/1"' in capsys.readouterr().err


def test_group_ids_follow_the_seed():
    assert group_ids(["S1", "S2", "S3", "S4", "S5"]) == "S1~S5"
    assert group_ids(["S2", "S3", "S4"]) == "S2~S4"
    assert group_ids(["S1", "S3"]) == "S1, S3"
    assert group_ids(["S1"]) == "S1"


def test_show_keeps_the_seed_reading_notes_behind_notes(capsys):
    plain = _show("kip441-scaling-out", capsys=capsys)
    assert "// " not in plain and "read as" not in plain
    noted = _show("kip441-scaling-out", "--notes", capsys=capsys)
    assert "// Initial State shows 'T1, T3' then 'standbyT2T1, T3': read as" in noted
    assert [line for line in noted.splitlines() if not line.startswith("// ")] == plain.splitlines()
    assert _show("kip441-scaling-out", "--notes", "--no-comments", capsys=capsys) == plain
