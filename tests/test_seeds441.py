"""The KIP-441 seed scenarios as data: faithful to the seed text, valid views, consistent answers."""

import doctest
import re
from pathlib import Path

import pytest

from rebalproof.model import seeds441
from rebalproof.model.balance import is_balanced
from rebalproof.model.codec import decode_assignment, decode_input, encode_assignment, encode_input
from rebalproof.model.ranking import is_caught_up, most_caught_up
from rebalproof.model.seeds441 import LAGGING, SCENARIO_NAMES, SCENARIOS, rounds

SEED = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "002_7432b538f26ac9fe.txt"
IDS = [f"{r.scenario}#{r.round}" for r in SCENARIOS]
def seed_text() -> str:
    """The seed page with its no-break spaces read as spaces (the export sprinkles them inside sentences)."""
    return SEED.read_text(encoding="utf-8").replace("\u00a0", " ")


needs_seed = pytest.mark.skipif(not SEED.is_file(), reason="the seed documents are not next to the repository")


def test_doctests():
    assert doctest.testmod(seeds441).failed == 0


def test_the_three_examples_of_the_kip_are_there():
    assert SCENARIO_NAMES == ("scaling-out", "scaling-in-1", "scaling-in-2")
    assert [len(rounds(name)) for name in SCENARIO_NAMES] == [2, 1, 2]
    assert [r.round for r in rounds("scaling-out")] == [1, 2]
    with pytest.raises(KeyError, match="the scenarios are scaling-out, scaling-in-1, scaling-in-2"):
        rounds("scaling-sideways")


@needs_seed
@pytest.mark.parametrize("rebalance", SCENARIOS, ids=IDS)
def test_narrative_fragments_are_the_seed_text_verbatim(rebalance):
    text = seed_text()
    fragments = [f.strip() for f in rebalance.narrative.split(" ... ")]
    assert [f for f in fragments if f not in text] == []


@needs_seed
@pytest.mark.parametrize("rebalance", SCENARIOS, ids=IDS)
def test_section_and_title_are_headings_of_the_seed_in_order(rebalance):
    text = SEED.read_text(encoding="utf-8")
    section_at = text.index(f"\n{rebalance.section}\n")
    assert text.index(rebalance.title, section_at) > section_at


@needs_seed
@pytest.mark.parametrize("rebalance", SCENARIOS, ids=IDS)
def test_the_note_quotes_what_the_flattened_export_shows(rebalance):
    text = seed_text()
    quoted = re.findall(r"'([^']+)'", rebalance.note)
    assert quoted, "every reconstruction says what the export shows"
    assert [q for q in quoted if q not in text] == []


@pytest.mark.parametrize("rebalance", SCENARIOS, ids=IDS)
def test_views_and_answers_round_trip_through_the_contract(rebalance):
    assert decode_input(encode_input(rebalance.view)) == rebalance.view
    assert decode_assignment(encode_assignment(rebalance.expected), rebalance.view) == rebalance.expected


@pytest.mark.parametrize("rebalance", SCENARIOS, ids=IDS)
def test_each_answer_has_one_active_and_one_standby_per_task_on_different_instances(rebalance):
    view, expected = rebalance.view, rebalance.expected
    assert expected.member_ids == view.member_ids
    for task_id in view.task_ids:
        actives, standbys = expected.holders(task_id, "active"), expected.holders(task_id, "standby")
        assert len(actives) == 1 and len(standbys) == 1 and actives != standbys


@pytest.mark.parametrize("rebalance", SCENARIOS, ids=IDS)
def test_probing_exactly_while_the_answer_is_unbalanced(rebalance):
    assert rebalance.expected.probing_rebalance is not is_balanced(rebalance.view, rebalance.expected)


@pytest.mark.parametrize("rebalance", SCENARIOS, ids=IDS)
def test_answers_put_actives_only_on_most_caught_up_instances(rebalance):
    for member_id, roles in rebalance.expected.members:
        assert all(member_id in most_caught_up(rebalance.view, t) for t in roles.active)


def test_extra_copies_only_in_the_catching_up_round_of_scaling_out():
    with_warmups = [(r.scenario, r.round) for r in SCENARIOS if any(a.warmup for _, a in r.expected.members)]
    assert with_warmups == [("scaling-out", 1)]
    first = rounds("scaling-out")[0]
    assert first.expected.of("I3").warmup == ("T1", "T3")
    assert len(first.expected.of("I3").warmup) == first.view.config.max_warmup_replicas


@pytest.mark.parametrize("name", ["scaling-out", "scaling-in-2"])
def test_second_round_starts_from_what_the_first_assigned(name):
    first, second = rounds(name)
    assert second.view.member_ids == first.view.member_ids
    assert second.view.previous_members == first.view.member_ids
    for member in second.view.members:
        given = first.expected.of(member.id)
        assert (member.active, member.standby, member.warmup) == (given.active, given.standby, given.warmup)


def test_lags_say_what_the_narratives_say():
    (in_sync,) = rounds("scaling-in-1")
    assert all(lag == 0 for m in in_sync.view.members for _, lag in m.lags)
    lagging, restored = rounds("scaling-in-2")
    standby_lags = [m.lag(t) for m in lagging.view.members for t in m.standby]
    assert standby_lags and all(lag == LAGGING > lagging.view.config.acceptable_recovery_lag for lag in standby_lags)
    assert is_caught_up(restored.view, "I3", "T4")
    assert not is_caught_up(restored.view, "I3", "T2"), "only T4 is named as restored"
    joined = rounds("scaling-out")[1].view.member("I3")
    assert all(is_caught_up(rounds("scaling-out")[1].view, "I3", t) for t in joined.warmup)
