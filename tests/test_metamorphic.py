"""Renaming and equivariance (rebalproof.symmetry) and the metamorphic properties.

Each metamorphic property catches a small, deliberately broken assignor written here, and the
correct example assignor (examples/ha_assignor.py) passes them on the KIP-441 scenarios.
"""

import doctest
import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rebalproof import symmetry
from rebalproof.errors import InputError
from rebalproof.model.assignment import Assignment
from rebalproof.model.assignors.spec import resolve
from rebalproof.model.codec import decode_input, encode_assignment, encode_input, read_json
from rebalproof.model.view import Member
from rebalproof.properties import metamorphic
from rebalproof.properties.metamorphic import (
    METAMORPHIC,
    check_metamorphic,
    feed_back,
    idempotence,
    lag_monotonicity,
    reordering,
)
from rebalproof.properties.verdict import Status
from rebalproof.strategies import rebalance_inputs
from rebalproof.symmetry import (
    Renaming,
    check_equivariance,
    check_renaming,
    random_renaming,
    rename_assignment,
    rename_input,
    same_up_to_automorphism,
)

from conftest import ROOT

SCALE_OUT = decode_input(read_json(ROOT / "examples" / "inputs" / "scale_out.json"))
SETTLED = decode_input(read_json(ROOT / "examples" / "inputs" / "settled.json"))
CORRECT = "py:examples.ha_assignor:assign"


@pytest.fixture(scope="module")
def correct():
    with resolve(CORRECT) as assignor:
        yield assignor


@pytest.mark.parametrize("module", [symmetry, metamorphic])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


# -- renaming ---------------------------------------------------------------------------

def test_renaming_renames_every_id_and_inverts():
    r = Renaming(members={"I1": "I3", "I3": "I1"}, tasks={"0_0": "0_2", "0_2": "0_0", "1_0": "1_1", "1_1": "1_0"})
    renamed = rename_input(SCALE_OUT, r)
    assert renamed.member("I3").active == ("0_0", "0_2", "1_1")
    assert renamed.member("I3").lag("0_2") == 0 and renamed.member("I3").lag("0_0") == 0
    assert renamed.member("I2").standby == ("0_0", "0_2")  # swapped within subtopology 0: same set
    assert renamed.previous_members == ("I2", "I3")
    assert rename_input(renamed, r.inverse()) == SCALE_OUT
    answer = Assignment.build({"I1": {"active": ["0_0"], "warmup": ["1_0"]}, "I3": {"standby": ["0_2"]}}, probing_rebalance=True)
    assert rename_assignment(rename_assignment(answer, r), r.inverse()) == answer
    assert r.then(r.inverse()).is_identity
    assert r.describe() == "I1->I3, I3->I1; 0_0->0_2, 0_2->0_0, 1_0->1_1, 1_1->1_0"


@pytest.mark.parametrize(
    "renaming, says",
    [
        (Renaming(members={"I1": "I2"}), "both to 'I2'"),
        (Renaming(tasks={"0_0": "2_0"}), "subtopology '0'"),
        (Renaming(tasks={"1_0": "0_5", "1_1": "0_6"}), "two subtopologies to one"),
    ],
)
def test_a_renaming_that_is_not_one_is_refused(renaming, says):
    with pytest.raises(InputError, match=says):
        check_renaming(SCALE_OUT, renaming)


@given(rebalance_inputs(max_members=4, max_subtopologies=3, max_partitions=3), st.integers(0, 2**32))
@settings(max_examples=40)
def test_random_renamings_are_valid_and_invert(view, seed):
    import random

    r = random_renaming(view, random.Random(seed))
    check_renaming(view, r)
    assert rename_input(rename_input(view, r), r.inverse()) == view


def test_same_up_to_automorphism_tells_interchangeable_members_from_different_ones():
    fresh = decode_input({"tasks": [{"id": "0_0"}, {"id": "0_1"}], "members": [{"id": "I1"}, {"id": "I2"}, {"id": "I3"}]})
    a = Assignment.build({"I1": {"active": ["0_0"]}, "I2": {"active": ["0_1"]}, "I3": {}})
    b = Assignment.build({"I1": {}, "I2": {"active": ["0_0"]}, "I3": {"active": ["0_1"]}})
    c = Assignment.build({"I1": {"active": ["0_0", "0_1"]}, "I2": {}, "I3": {}})
    assert same_up_to_automorphism(fresh, a, b)
    assert not same_up_to_automorphism(fresh, a, c)
    assert not same_up_to_automorphism(SETTLED, encode(SETTLED, "I1", "I2"), encode(SETTLED, "I2", "I1"))


def encode(view, first, second):
    """All tasks on ``first`` except 0_0 on ``second``."""
    return Assignment.build({m: {"active": [t for t in view.task_ids if (t == "0_0") == (m == second)]} if m in (first, second) else {}
                             for m in view.member_ids})


# -- equivariance -----------------------------------------------------------------------

def name_hash_assignor(view):
    """Deals every task round-robin over the members in the order of a hash of their names."""
    order = sorted(view.member_ids, key=lambda m: hashlib.sha256(m.encode()).hexdigest())
    roles = {m: {"active": []} for m in view.member_ids}
    for i, task_id in enumerate(view.task_ids):
        roles[order[i % len(order)]]["active"].append(task_id)
    return Assignment.build(roles)


def position_assignor(view):
    """Deals tasks round-robin over the members in id order: ties by position only."""
    roles = {m: {"active": []} for m in view.member_ids}
    for i, task_id in enumerate(view.task_ids):
        roles[view.member_ids[i % len(view.member_ids)]]["active"].append(task_id)
    return Assignment.build(roles)


def test_an_assignor_that_depends_on_names_is_reported_with_the_renaming():
    result = check_equivariance(name_hash_assignor, SCALE_OUT, samples=16, seed=0)
    assert result.violated
    assert "the answer to the renamed input is not the renamed answer" in result.message
    assert result.renaming is not None and result.renaming.describe() in result.message
    # both answers are the real ones
    assert result.renamed_input == rename_input(SCALE_OUT, result.renaming)
    assert result.actual == name_hash_assignor(result.renamed_input)
    assert result.expected == rename_assignment(name_hash_assignor(SCALE_OUT), result.renaming)
    assert not same_up_to_automorphism(result.renamed_input, result.expected, result.actual)
    assert result.renaming.size == 2  # shrunk to one swap
    verdict = result.to_verdict()
    assert verdict.property == "renaming" and verdict.violated and verdict.members


def test_ties_broken_by_position_between_interchangeable_members_are_not_accused():
    fresh = decode_input({"tasks": [{"id": f"{s}_{p}", "stateful": s == 0} for s in range(2) for p in range(3)],
                          "members": [{"id": f"I{i}"} for i in range(1, 4)], "previous_members": []})
    result = check_equivariance(position_assignor, fresh, samples=24, seed=3)
    assert result.holds, result.message
    assert result.nontrivial > 0  # some renamings really moved the input: not vacuous


def test_the_correct_example_is_equivariant_on_the_kip441_scenarios(correct):
    for view in (SCALE_OUT, SETTLED):
        result = check_equivariance(correct, view, samples=16, seed=1)
        assert result.holds, result.message
        assert result.nontrivial > 0


def test_equivariance_is_deterministic_in_its_seed():
    a = check_equivariance(name_hash_assignor, SETTLED, samples=8, seed=5)
    b = check_equivariance(name_hash_assignor, SETTLED, samples=8, seed=5)
    assert a == b


def test_nothing_to_rename_is_inconclusive_not_a_pass():
    alone = decode_input({"tasks": [{"id": "0_0"}], "members": [{"id": "I1"}]})
    assert check_equivariance(position_assignor, alone, samples=4).status is Status.INCONCLUSIVE
    same = decode_input({"tasks": [], "members": [{"id": "I1"}, {"id": "I2"}]})
    result = check_equivariance(position_assignor, same, samples=4)
    assert result.status is Status.INCONCLUSIVE and "map the input to itself" in result.message
    with pytest.raises(InputError, match="samples"):
        check_equivariance(position_assignor, same, samples=0)


# -- the metamorphic properties ----------------------------------------------------------

def test_the_correct_example_passes_every_metamorphic_property(correct):
    lagging = SCALE_OUT.replace(members=tuple(
        Member(id=m.id, active=m.active, standby=m.standby, lags={"0_0": 25, "0_1": 300, "0_2": 25}) if m.id == "I2" else m
        for m in SCALE_OUT.members))
    for view in (SCALE_OUT, SETTLED, lagging):
        verdicts = check_metamorphic(correct, view, seed=2, samples=6)
        assert [v.property for v in verdicts] == [p.name for p in METAMORPHIC]
        assert not [v for v in verdicts if v.violated], [v.message for v in verdicts]
    statuses = {v.property: v.status for v in check_metamorphic(correct, lagging, seed=2, samples=6)}
    assert all(s is Status.HOLDS for s in statuses.values()), statuses  # not vacuous on this input


def reorder_sensitive(obj):
    """Every task to the member listed first: the order of a set leaks into the answer."""
    first = obj["members"][0]["id"]
    return {"assignment": {m["id"]: {"active": [t["id"] for t in obj["tasks"]] if m["id"] == first else []}
                           for m in obj["members"]}}


def test_reordering_catches_an_assignor_that_reads_the_list_order():
    from rebalproof.pytest_plugin import FunctionAssignor

    verdict = reordering(FunctionAssignor(reorder_sensitive), SETTLED, samples=8, seed=0)
    assert verdict.violated and "another order" in verdict.message
    assert decode_input(verdict.measure["input"]) == SETTLED  # the same input, listed otherwise


def test_reordering_cannot_reach_an_assignor_on_views_and_says_so():
    verdict = reordering(position_assignor, SETTLED)
    assert verdict.status is Status.INCONCLUSIVE and "order" in verdict.message


def flip_flop(view):
    """Hands each stateless task to the next member after its owner: valid and balanced, never settles."""
    ids = view.member_ids
    roles = {m: {"active": [], "standby": list(view.member(m).standby)} for m in ids}
    for task_id in view.task_ids:
        owners = view.owners(task_id)
        owner = owners[0] if owners else ids[0]
        if not view.task(task_id).stateful:
            owner = ids[(ids.index(owner) + 1) % len(ids)]
        roles[owner]["active"].append(task_id)
    return Assignment.build(roles)


def test_idempotence_catches_an_assignor_that_never_settles():
    verdict = idempotence(flip_flop, SETTLED)
    assert verdict.violated
    assert "fed back (restores finished) the answer changes it" in verdict.message and "1_0" in verdict.tasks


def test_idempotence_feeds_back_until_an_answer_is_settled(correct):
    verdict = idempotence(correct, SCALE_OUT)
    assert verdict.holds and verdict.measure["rounds"] == 2  # the probing answer first, then settled
    nxt = feed_back(SCALE_OUT, correct(SCALE_OUT))
    assert nxt.member("I3").warmup == ("0_2",) and nxt.member("I3").lag("0_2") == 0
    assert nxt.previous_members == ("I1", "I2", "I3")


def test_idempotence_without_a_settled_answer_is_inconclusive():
    def never_balanced(view):
        return Assignment.build({m: {"active": list(view.task_ids) if m == view.member_ids[0] else []} for m in view.member_ids},
                                probing_rebalance=True)

    verdict = idempotence(never_balanced, SETTLED, rounds=3)
    assert verdict.status is Status.INCONCLUSIVE and "3 rounds" in verdict.message


def most_lagging_caught_up(view):
    """Gives each stateful task to the caught-up member with the *largest* lag (a reversed tie-break)."""
    from rebalproof.model.ranking import is_caught_up, lag_of

    roles = {m: {"active": []} for m in view.member_ids}
    for task_id in view.task_ids:
        if view.task(task_id).stateful:
            ready = [m for m in view.member_ids if is_caught_up(view, m, task_id)] or list(view.member_ids)
            chosen = max(ready, key=lambda m: (lag_of(view, m, task_id), m))
        else:
            chosen = view.member_ids[0]
        roles[chosen]["active"].append(task_id)
    return Assignment.build(roles)


def test_lag_monotonicity_catches_an_assignor_preferring_the_laggard():
    verdict = lag_monotonicity(most_lagging_caught_up, SCALE_OUT, seed=0)
    assert verdict.violated
    assert "took" in verdict.message and verdict.measure["lowered_to"] == 0


def test_lag_monotonicity_without_lags_is_inconclusive():
    fresh = decode_input({"tasks": [{"id": "0_0"}], "members": [{"id": "I1"}, {"id": "I2"}]})
    assert lag_monotonicity(position_assignor, fresh).status is Status.INCONCLUSIVE


def test_renaming_property_reports_the_name_dependent_assignor():
    (verdict,) = check_metamorphic(name_hash_assignor, SCALE_OUT, seed=0, names=("renaming",))
    assert verdict.violated and verdict.measure["renaming"]["members"]


def test_check_metamorphic_arguments_are_checked():
    with pytest.raises(InputError, match="unknown metamorphic property"):
        check_metamorphic(position_assignor, SETTLED, names=("nope",))
    with pytest.raises(InputError, match="samples"):
        check_metamorphic(position_assignor, SETTLED, samples=0)


def test_verdicts_serialise():
    for v in check_metamorphic(flip_flop, SETTLED, seed=1, samples=2):
        json.dumps(v.to_json())
    json.dumps(encode_input(SETTLED)), json.dumps(encode_assignment(flip_flop(SETTLED)))


# -- reordering reaches exec: programs ---------------------------------------------------

_EXEC_FIRST_LISTED = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    obj = json.loads(line)\n"
    "    first = obj['members'][0]['id']\n"
    "    print(json.dumps({'assignment': {m['id']: {'active': [t['id'] for t in obj['tasks']] if m['id'] == first else []}\n"
    "                                     for m in obj['members']}}), flush=True)\n"
)


def test_exec_call_json_sends_the_object_as_given(tmp_path):
    from rebalproof.model.assignors.external import ExecAssignor

    program = tmp_path / "first_listed.py"
    program.write_text(_EXEC_FIRST_LISTED)
    obj = encode_input(SETTLED)
    with ExecAssignor(f"python3 {program}", timeout=10) as runner:
        canonical = runner(SETTLED)
        listed = dict(obj, members=list(reversed(obj["members"])))
        other = runner.call_json(listed, SETTLED)
        assert runner.calls == 2
    first, last = SETTLED.member_ids[0], SETTLED.member_ids[-1]
    assert set(canonical.of(first).active) == set(SETTLED.task_ids)
    assert set(other.of(last).active) == set(SETTLED.task_ids)  # the reversed order reached the program
    with pytest.raises(InputError, match="RebalanceInput object"):
        ExecAssignor("python3 -c pass").call_json([], SETTLED)


def test_reordering_catches_an_exec_program_that_reads_the_list_order(tmp_path):
    program = tmp_path / "first_listed.py"
    program.write_text(_EXEC_FIRST_LISTED)
    with resolve(f"exec:python3 {program}") as assignor:
        verdict = reordering(assignor, SETTLED, samples=8, seed=0)
    assert verdict.violated and "another order" in verdict.message
    assert decode_input(verdict.measure["input"]) == SETTLED


def test_reordering_holds_for_the_correct_exec_example():
    with resolve(f"exec:node {ROOT / 'examples' / 'ha_assignor.js'}") as assignor:
        verdict = reordering(assignor, SCALE_OUT, samples=6, seed=1)
        assert assignor.backend.calls == 7  # one canonical call and six reordered ones, all sent
    assert verdict.status is Status.HOLDS, verdict.message
