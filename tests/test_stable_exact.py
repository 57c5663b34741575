"""``stable`` is exact: swaps and rotations of stateless tasks are caught, the moves are named,
the built-in assignors keep it, and its minimum agrees with brute force on tiny inputs.

KIP-441 "Assignment Algorithm", 6: "it should try not to shuffle stateless tasks randomly
among nodes". The minimum is over answers with the same stateful copies and the same number of
stateless actives per member and subtopology (:mod:`rebalproof.properties.stateless_moves`).
"""

from __future__ import annotations

import json
from itertools import permutations

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from rebalproof.model.assignment import Assignment, MemberAssignment
from rebalproof.model.assignors import builtin
from rebalproof.model.codec import encode_assignment, encode_input
from rebalproof.model.names import subtopology_of
from rebalproof.model.view import Config, Member, RebalanceInput, Task
from rebalproof.properties.stability import stable
from rebalproof.properties.stateless_moves import stateless_moves
from rebalproof.strategies import assignments, rebalance_inputs

STICKY_RULES = ("sticky", "eager", "ha")
INPUTS = rebalance_inputs(max_members=5, max_subtopologies=3, max_partitions=4)


def _view(tasks, members) -> RebalanceInput:
    return RebalanceInput(
        config=Config(),
        tasks=tuple(Task(id=t, stateful=False) for t in tasks),
        members=tuple(Member(**m) for m in members),
        previous_members=tuple(m["id"] for m in members),
    )


def _answer(**members) -> Assignment:
    return Assignment.build({m: {"active": text.split()} for m, text in members.items()})


SETTLED = _view(["1_0", "1_1", "1_2"], [{"id": "I1", "active": ("1_0",)}, {"id": "I2", "active": ("1_1",)}, {"id": "I3", "active": ("1_2",)}])


# -- examples --------------------------------------------------------------------------------------
def test_a_swap_is_caught_and_named():
    v = stable(SETTLED, _answer(I1="1_1", I2="1_0", I3="1_2"))
    assert v.violated and v.tasks == ("1_0", "1_1") and v.members == ("I1", "I2")
    assert v.message == (
        "stateless tasks moved without need: 1_0 from I1 to I2 and 1_1 from I2 to I1 "
        "(2 moves made, 0 needed to give each member the same number of stateless tasks per subtopology)"
    )
    assert v.measure == {"premise": True, "owned": 3, "moved": 2, "needed": 0}


def test_a_rotation_is_caught_and_never_called_needed():
    v = stable(SETTLED, _answer(I1="1_2", I2="1_0", I3="1_1"))
    assert v.violated and "needed for balance" not in v.message
    assert "1_0 from I1 to I2, 1_1 from I2 to I3 and 1_2 from I3 to I1" in v.message


def test_only_the_excess_is_named_when_some_moves_are_needed():
    # I1 owned three, ends with one: two must go; sending 1_1 to I3 and taking 1_3 from I2 is a needless exchange
    view = _view(["1_0", "1_1", "1_2", "1_3"], [{"id": "I1", "active": ("1_0", "1_1", "1_2")}, {"id": "I2", "active": ("1_3",)}, {"id": "I3"}])
    out = _answer(I1="1_3", I2="1_0 1_1", I3="1_2")
    moves = stateless_moves(view, out)
    assert (moves.owned, moves.moved, moves.needed) == (4, 4, 2)
    assert [(m.task, m.owner, m.holder) for m in moves.needless] == [("1_0", "I1", "I2"), ("1_3", "I2", "I1")]
    v = stable(view, out)
    assert v.violated and v.measure["needed"] == 2 and "(4 moves made, 2 needed" in v.message


def test_exchanges_across_subtopologies_are_judged_by_the_spread():
    # swapping 1_0 and 2_0 changes how each subtopology is spread: not compared by the exact test
    view = _view(["1_0", "2_0"], [{"id": "I1", "active": ("1_0",)}, {"id": "I2", "active": ("2_0",)}])
    assert stateless_moves(view, _answer(I1="2_0", I2="1_0")).needless == ()


def test_free_tasks_are_never_moves():
    gone = _view(["1_0", "1_1"], [{"id": "I1", "active": ("1_0",)}, {"id": "I2", "leaving": True, "active": ("1_1",)}, {"id": "I3"}])
    v = stable(gone, _answer(I1="1_0", I3="1_1"))
    assert v.holds and v.measure["moved"] == 0
    # a co-locating keep is no keep: I1 is given 1_0 as a standby
    colocated = Assignment(members={"I1": MemberAssignment(standby=("1_0",)), "I2": MemberAssignment(active=("1_0",))})
    assert stateless_moves(_view(["1_0"], [{"id": "I1", "active": ("1_0",)}, {"id": "I2"}]), colocated).owned == 0
    # 1_0 cannot stay (its owner got it as a standby): a forced move, counted as needed; 1_1's move was not
    view = _view(["1_0", "1_1"], [{"id": "I1", "active": ("1_0",)}, {"id": "I2", "active": ("1_1",)}])
    out = Assignment(members={"I1": MemberAssignment(active=("1_1",), standby=("1_0",)), "I2": MemberAssignment(active=("1_0",))})
    v = stable(view, out)
    assert v.violated and v.measure == {"premise": True, "owned": 2, "moved": 2, "needed": 1}
    assert v.message.startswith("stateless tasks moved without need: 1_1 from I2 to I1 (2 moves made, 1 needed")


def test_several_owners_are_matched_not_guessed():
    # 1_0 was active on I1 and I2 (an inconsistent group): either may keep it, but only one slot each
    view = _view(["1_0", "1_1"], [{"id": "I1", "active": ("1_0",)}, {"id": "I2", "active": ("1_0", "1_1")}])
    moves = stateless_moves(view, _answer(I1="1_1", I2="1_0"))
    # keeping 1_0 on I2 looks sticky, but 1_0 back on I1 lets I2 keep 1_1: no move at all
    assert (moves.moved, moves.needed) == (1, 0)
    assert [(m.task, m.owner, m.holder) for m in moves.needless] == [("1_1", "I2", "I1")]
    moves = stateless_moves(view, _answer(I1="1_0", I2="1_1"))
    assert (moves.moved, moves.needed) == (0, 0)


# -- brute force ------------------------------------------------------------------------------------
def _brute_needed(view: RebalanceInput, out: Assignment) -> tuple[int, int]:
    """(moved, fewest moves) over every rearrangement of the stateless actives keeping each member's count per subtopology."""
    from rebalproof.properties.stateless_moves import _keepers, _single_holder

    moved = best = 0
    by_sub: dict[str, list[tuple[str, str]]] = {}
    for t in view.stateless_task_ids:
        h = _single_holder(view, out, t)
        if h is not None:
            by_sub.setdefault(subtopology_of(t), []).append((t, h))
    for rows in by_sub.values():
        keep = {t: _keepers(view, out, t) for t, _ in rows}
        moves = lambda placed: sum(1 for (t, _), h in zip(rows, placed) if keep[t] and h not in keep[t])  # noqa: E731
        moved += moves([h for _, h in rows])
        best += min(moves(p) for p in set(permutations([h for _, h in rows])))
    return moved, best


@st.composite
def _tangled(draw):
    """One or two stateless subtopologies, owners drawn freely (none, one or two per task, some leaving)."""
    ids = [f"I{i}" for i in range(1, draw(st.integers(1, 4)) + 1)]
    tasks = [f"{s}_{p}" for s in range(draw(st.integers(1, 2))) for p in range(draw(st.integers(1, 4)))]
    owned = {m: [] for m in ids}
    for t in tasks:
        for m in draw(st.lists(st.sampled_from(ids), max_size=2, unique=True)):
            owned[m].append(t)
    leaving = draw(st.sets(st.sampled_from(ids), max_size=1))
    view = _view(tasks, [{"id": m, "active": tuple(owned[m]), "leaving": m in leaving} for m in ids])
    holder = {t: draw(st.sampled_from(ids)) for t in tasks}
    out = Assignment.build({m: {"active": [t for t in tasks if holder[t] == m]} for m in ids})
    return view, out


@settings(max_examples=300)
@given(_tangled())
def test_minimum_agrees_with_brute_force_on_tangled_owners(pair):
    view, out = pair
    moves = stateless_moves(view, out)
    assert (moves.moved, moves.needed) == _brute_needed(view, out)
    assert len(moves.needless) == moves.moved - moves.needed


@settings(max_examples=300)
@given(rebalance_inputs(max_members=3, max_subtopologies=2, max_partitions=3).flatmap(lambda v: assignments(v).map(lambda a: (v, a))))
def test_minimum_agrees_with_brute_force_on_generated_answers(pair):
    view, out = pair
    moves = stateless_moves(view, out)
    assert (moves.moved, moves.needed) == _brute_needed(view, out)


# -- the built-ins keep it; swaps and rotations of their answers are caught ------------------------
@pytest.mark.parametrize("name", ["sticky", "eager", "ha"])
@settings(max_examples=300)
@given(view=INPUTS)
def test_builtins_keep_exact_stable(name, view):
    out = builtin(name).make()(view)
    v = stable(view, out)
    note(f"input: {json.dumps(encode_input(view))}\noutput: {json.dumps(encode_assignment(out))}")
    assert v.holds, v.message
    assert v.measure["needed"] == v.measure["moved"]


def _kept_stateless(view: RebalanceInput, out: Assignment) -> dict[str, list[tuple[str, str]]]:
    """Per subtopology, (task, member) of stateless tasks the answer leaves with their staying owner, one per member."""
    found: dict[str, dict[str, str]] = {}
    for t in view.stateless_task_ids:
        holders = set(out.actives_of(t))
        owners = [m for m in view.owners(t) if not view.member(m).leaving]
        if len(holders) == 1 and holders <= set(owners) and t not in out.of(owners[0]).standby + out.of(owners[0]).warmup:
            found.setdefault(subtopology_of(t), {}).setdefault(next(iter(holders)), t)
    return {s: sorted((t, m) for m, t in per.items()) for s, per in found.items()}


def _rotate(out: Assignment, chosen: list[tuple[str, str]]) -> Assignment:
    """Each chosen task goes to the member of the next one (a swap for two, a rotation for three)."""
    members = dict(out.members)
    for i, (task, frm) in enumerate(chosen):
        to = chosen[(i + 1) % len(chosen)][1]
        src, dst = members[frm], members[to]
        members[frm] = MemberAssignment(active=tuple(x for x in src.active if x != task), standby=src.standby, warmup=src.warmup)
        members[to] = MemberAssignment(active=(*members[to].active, task), standby=dst.standby, warmup=dst.warmup)
    return Assignment(members=members, probing_rebalance=out.probing_rebalance)


@pytest.mark.parametrize("name", STICKY_RULES)
@pytest.mark.parametrize("size", [2, 3])
@settings(max_examples=60, suppress_health_check=[HealthCheck.filter_too_much])
@given(view=INPUTS, data=st.data())
def test_swaps_and_rotations_of_a_stable_answer_are_caught(name, size, view, data):
    out = builtin(name).make()(view)
    candidates = [rows for rows in _kept_stateless(view, out).values() if len(rows) >= size]
    assume(candidates and stable(view, out).holds)
    rows = data.draw(st.sampled_from(candidates))
    chosen = data.draw(st.permutations(rows).map(lambda p: p[:size]))
    v = stable(view, _rotate(out, chosen))
    assert v.violated, v.message
    assert v.measure["moved"] - v.measure["needed"] >= size
    assert "needed for balance" not in v.message
