"""The KIP-429 seed scenarios as data: faithful to the seed text, valid views, consistent answers."""

import doctest
from pathlib import Path

import pytest

from rebalproof.errors import InputError
from rebalproof.model import seeds429
from rebalproof.model.codec import check_ids, decode_input, encode_input
from rebalproof.model.view import Config
from rebalproof.model.seeds429 import READY_LAG, SCENARIOS, UNREADY_LAG, all_rebalances, scenario

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"
REBALANCES = all_rebalances()
IDS = [f"{r.scenario}#{r.round}" for r in REBALANCES]


def test_doctests():
    assert doctest.testmod(seeds429).failed == 0


def test_every_scenario_of_the_seeds_is_there():
    assert [s.name for s in SCENARIOS] == [
        "scale-up",
        "scale-up-from-empty",
        "scale-down",
        "host-swap",
        "leader-crash-during-scaling",
        "leader-crash-before-scaling",
    ]
    assert [len(s.rebalances) for s in SCENARIOS] == [4, 3, 3, 3, 2, 1]
    assert {s.name: s.learner_version for s in SCENARIOS} == {
        "scale-up": 1,
        "scale-up-from-empty": 1,
        "scale-down": 2,
        "host-swap": 2,
        "leader-crash-during-scaling": 1,
        "leader-crash-before-scaling": 1,
    }


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seed documents are not next to the repository")
@pytest.mark.parametrize("rebalance", REBALANCES, ids=IDS)
def test_narrative_is_the_seed_text_verbatim(rebalance):
    lines = set()
    for name in ("001_cae4ac70bffb4682.txt", "000_a1d416593e157c7b.txt"):
        lines |= set((SEEDS / name).read_text(encoding="utf-8").splitlines())
    missing = [line for line in rebalance.narrative.splitlines() if line not in lines]
    assert missing == []


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seed documents are not next to the repository")
@pytest.mark.parametrize("s", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario_points_at_its_seed_section_and_title(s):
    text = (SEEDS / s.seed).read_text(encoding="utf-8")
    assert s.section in text and f"\n{s.title}\n" in text


@pytest.mark.parametrize("rebalance", REBALANCES, ids=IDS)
def test_views_and_answers_are_valid_contract_values(rebalance):
    view, expected = rebalance.view, rebalance.expected
    assert decode_input(encode_input(view)) == view
    check_ids(expected, view)
    assert all(m.startswith("S") for m in view.member_ids) and all(t.startswith("T") for t in view.task_ids)
    assert all(t.stateful for t in view.tasks) and all(m.capacity == 1 for m in view.members)
    assert view.config == Config()
    for task in view.task_ids:
        assert len(expected.actives_of(task)) == 1, task
    for member in view.members:
        # revoked tasks appear only in lags, at lag 0; learners carry the ready or unready lag
        for task, lag in member.lags:
            if task in member.warmup:
                assert lag in (READY_LAG, UNREADY_LAG)
            else:
                assert task not in member.copies and lag == READY_LAG
        assert not expected.of(member.id).standby


@pytest.mark.parametrize("s", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_rounds_are_numbered_and_consistent(s):
    assert [r.round for r in s.rebalances] == list(range(1, len(s.rebalances) + 1))
    assert all(r.scenario == s.name and r.learner_version == s.learner_version for r in s.rebalances)
    for r in s.rebalances:
        assert {m.id for m in r.view.members if m.leaving} <= set(s.leaving)


def test_later_rounds_start_from_the_seed_answer():
    """Members join holding what the seed assigned them last round: actives (or their state, once
    revoked) and the same learners; members the last answer did not name join empty."""
    for s in SCENARIOS:
        for before, after in zip(s.rebalances, s.rebalances[1:]):
            for member in after.view.members:
                given = before.expected.of(member.id)
                revoked = {t for t, _ in member.lags} - set(member.warmup)
                assert set(member.active) | revoked == set(given.active), (s.name, after.round, member.id)
                assert member.warmup == given.warmup and not member.standby, (s.name, after.round, member.id)


def test_contradictions_of_the_seed_text_are_noted():
    su = scenario("scale-up").rebalances
    assert "learning: [T3]" in su[1].note and "000" in su[1].note
    assert su[1].view.member("S5").warmup == ()
    assert "S5 is not ready yet" in su[3].note and su[3].view.member("S5").lag("T3") == READY_LAG
    sd = scenario("scale-down").rebalances[1]
    assert "S2(assigned: [T3], revoked: [T4]" in sd.note and "S2(assigned: [], revoked: [T3, T4]" in sd.note
    assert sd.view.member("S2").active == () and sd.view.member("S2").lag("T3") == READY_LAG
    assert "3 stream workers S1(leader), S2" in scenario("leader-crash-before-scaling").note
    assert "swapped" in scenario("scale-down").note and "swapped" in scenario("leader-crash-during-scaling").note


def test_leader_memory():
    assert scenario("leader-crash-during-scaling").rebalances[1].view.previous_members is None
    assert scenario("leader-crash-before-scaling").rebalances[0].view.previous_members is None
    assert scenario("scale-up-from-empty").rebalances[0].view.previous_members == ()
    assert scenario("scale-up").rebalances[1].view.is_new("S5") is True


def test_free_choices_are_stated_where_learners_or_orphans_are_placed():
    stated = {(r.scenario, r.round) for r in REBALANCES if r.free_choice}
    assert stated == {
        ("scale-up", 1),
        ("scale-up", 2),
        ("scale-up-from-empty", 2),
        ("scale-down", 1),
        ("host-swap", 1),
        ("host-swap", 2),
        ("leader-crash-during-scaling", 1),
        ("leader-crash-during-scaling", 2),
        ("leader-crash-before-scaling", 1),
    }


def test_unknown_scenario_names_the_known_ones():
    with pytest.raises(InputError, match="the scenarios are scale-up, scale-up-from-empty"):
        scenario("scale-sideways")


def test_values_are_frozen():
    r = REBALANCES[0]
    with pytest.raises(Exception):
        r.round = 9  # type: ignore[misc]
    assert isinstance(SCENARIOS, tuple) and isinstance(SCENARIOS[0].rebalances, tuple)
