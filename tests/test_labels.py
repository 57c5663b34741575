"""Labels do not change verdicts: a copy beyond the active is a standby or an extra copy by count.

Metamorphic: relabel copies standby <-> warmup, in the answer and in the input's current
assignment, and every property of the catalogue gives the same verdict under every rule set
(status, tasks, members and measure; only the wording of a message may name the label). Kafka
does not label warmups at all: its warmups are standbys (seed 002, "Iterative Balancing
Assignments": "the assignor will assign "extra" standby replicas to the destination instances").
Answers come from the built-in assignors, from the deliberately broken ones and from
:func:`rebalproof.strategies.assignments` (near-valid and arbitrary answers).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from broken_assignors import BROKEN
from rebalproof.model.assignment import Assignment, MemberAssignment
from rebalproof.model.assignors import builtin
from rebalproof.model.codec import encode_assignment, encode_input
from rebalproof.model.view import Config, Member, RebalanceInput, Task
from rebalproof.properties import RULE_SETS, check_assignment
from rebalproof.properties.common import split_replicas
from rebalproof.strategies import assignments, rebalance_inputs

INPUTS = rebalance_inputs(max_members=5, max_subtopologies=3, max_partitions=3)


def _flip(standby, warmup, chosen) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Move the ``chosen`` tasks to the other list (a task listed in both keeps one of each)."""
    return (
        tuple(t for t in standby if t not in chosen) + tuple(t for t in warmup if t in chosen),
        tuple(t for t in warmup if t not in chosen) + tuple(t for t in standby if t in chosen),
    )


def relabel_answer(out: Assignment, pick) -> Assignment:
    members = {}
    for member, held in out.members:
        standby, warmup = _flip(held.standby, held.warmup, pick(member, held.standby + held.warmup))
        members[member] = MemberAssignment(active=held.active, standby=standby, warmup=warmup)
    return Assignment(members=members, probing_rebalance=out.probing_rebalance)


def relabel_input(view: RebalanceInput, pick) -> RebalanceInput:
    members = []
    for m in view.members:
        standby, warmup = _flip(m.standby, m.warmup, pick(m.id, m.standby + m.warmup))
        members.append(replace(m, standby=standby, warmup=warmup))
    return view.replace(members=tuple(members))


def _picker(data):
    """A drawn choice of which replicas to relabel: per (member, task), flip or not."""
    flips = {}

    def pick(member, tasks):
        out = set()
        for t in tasks:
            if (member, t) not in flips:
                flips[(member, t)] = data.draw(st.booleans(), label=f"flip {t} on {member}")
            if flips[(member, t)]:
                out.add(t)
        return out

    return pick


#: The verdicts a label decides: under KIP-429 a ``warmup`` copy is a learner, told apart from
#: a standby by its ``isLearner`` tag (seed 001 "Task Tagging"; properties/leaving.py), and a ready
#: learner takes its task over (properties/learners.py; what the other rule sets report of it
#: for information reads the label too).
LABEL_READ = {("learner", "staying-learners")} | {(rules, "learner-takes-over") for rules in RULE_SETS}


def _verdicts(view, out):
    return {
        (rules, v.property): (v.status, v.tasks, v.members, v.measure)
        for rules in RULE_SETS
        for v in check_assignment(view, out, rules=rules)
        if (rules, v.property) not in LABEL_READ
    }


def assert_same_verdicts(view, out, data):
    pick = _picker(data)
    relabelled_out = relabel_answer(out, pick)
    relabelled_view = relabel_input(view, pick)
    note(f"input: {json.dumps(encode_input(view))}\noutput: {json.dumps(encode_assignment(out))}")
    note(f"relabelled output: {json.dumps(encode_assignment(relabelled_out))}")
    base = _verdicts(view, out)
    assert _verdicts(view, relabelled_out) == base
    assert _verdicts(relabelled_view, relabelled_out) == base
    assert _verdicts(relabelled_view, out) == base


@pytest.mark.parametrize("name", ["sticky", "eager", "learner", "ha"])
@settings(max_examples=150)
@given(view=INPUTS, data=st.data())
def test_relabelling_builtin_answers_changes_no_verdict(name, view, data):
    assert_same_verdicts(view, builtin(name).make()(view), data)


@pytest.mark.parametrize("name", sorted(BROKEN))
@settings(max_examples=25)
@given(view=INPUTS, data=st.data())
def test_relabelling_broken_answers_changes_no_verdict(name, view, data):
    out = BROKEN[name][0](view)
    if out is not None:
        assert_same_verdicts(view, out, data)


@settings(max_examples=300)
@given(INPUTS.flatmap(lambda v: assignments(v).map(lambda a: (v, a))), st.data())
def test_relabelling_any_answer_changes_no_verdict(pair, data):
    view, out = pair
    assert_same_verdicts(view, out, data)


def test_the_standbys_are_the_most_caught_up_replicas():
    view = RebalanceInput(
        config=Config(num_standby_replicas=1),
        tasks=(Task(id="0_0"),),
        members=(Member(id="I1", lags={"0_0": 0}), Member(id="I2", lags={"0_0": 90000}), Member(id="I3", lags={"0_0": 5})),
    )
    # whatever the labels, I3 (caught up) is the standby and I2 (far behind) the extra copy
    for labels in ({"standby": ["0_0"]}, {"warmup": ["0_0"]}):
        out = Assignment.build({"I1": {"active": ["0_0"]}, "I2": labels, "I3": {"warmup": ["0_0"]}})
        assert split_replicas(view, out, "0_0") == (("I3",), ("I2",))


@pytest.mark.parametrize("name", ["sticky", "eager", "ha"])
@settings(max_examples=300)
@given(view=INPUTS, data=st.data())
def test_builtins_keep_their_promises_whatever_the_input_calls_its_copies(name, view, data):
    """Kafka's leader cannot tell a warmup from a standby going in; a reference must not need to."""
    relabelled = relabel_input(view, _picker(data))
    info = builtin(name)
    out = info.make()(relabelled)
    note(f"input: {json.dumps(encode_input(relabelled))}\noutput: {json.dumps(encode_assignment(out))}")
    broken = [v for v in check_assignment(relabelled, out, rules=info.rules) if v.status.value in ("violated", "inconclusive")]
    assert not broken, "\n".join(f"{v.property}: {v.message}" for v in broken)


def test_a_warmup_going_in_is_kept_like_a_standby():
    """A balanced, caught-up group whose only replica of 0_0 is labelled warmup: the references keep it."""
    for role in ("standby", "warmup"):
        view = RebalanceInput(
            config=Config(num_standby_replicas=1),
            tasks=(Task(id="0_0"), Task(id="0_1"), Task(id="0_2")),
            members=(
                Member(id="I1", active=("0_0",), standby=("0_2",), lags={"0_0": 0, "0_2": 0}),
                Member(id="I2", active=("0_1",), lags={"0_1": 0, "0_0": 50000}, **{role: ("0_0",)}),
                # no state for 0_0: with I3 caught up on it and holding no copy, the standby behind
                # on I2 may move (requirement 2 ranks above 5) and the premise would not hold
                Member(id="I3", active=("0_2",), standby=("0_1",), lags={"0_1": 0, "0_2": 0}),
            ),
            previous_members=("I1", "I2", "I3"),
        )
        for name in ("sticky", "eager", "ha"):
            out = builtin(name).make()(view)
            verdict = {v.property: v for v in check_assignment(view, out, rules=builtin(name).rules)}["fixpoint"]
            assert verdict.holds and verdict.measure["premise"], (role, name, verdict.message)


def _one_label(inner, role):
    """``inner``, its answers carrying every replica under one label, ``role``."""
    def answer(view):
        out = inner(view)
        members = {}
        for member, held in out.members:
            replicas = tuple(dict.fromkeys(held.standby + held.warmup))
            members[member] = MemberAssignment(
                active=held.active,
                standby=replicas if role == "standby" else (),
                warmup=replicas if role == "warmup" else (),
            )
        return Assignment(members=members, probing_rebalance=out.probing_rebalance)

    return answer


RUN_BOUNDS = [
    dict(),
    dict(capacities=(2, 1)),
    dict(standbys=0, stateless=2),
    dict(instances=4, initial=3, subtopologies=1, partitions=3, events=1),
]


@pytest.mark.parametrize("bounds", RUN_BOUNDS, ids=lambda b: ",".join(f"{k}={v}" for k, v in b.items()) or "defaults")
def test_relabelling_answers_changes_no_run_verdict(bounds):
    """The whole model check under the cooperative protocol and the ha rules, with the built-in ha
    answering as it does, with every replica labelled standby (as Kafka encodes warmups) and with
    every replica labelled warmup: every run property (the witnesses included) gives the same status.
    """
    from rebalproof.model.assignors.spec import resolve
    from rebalproof.model.group_bounds import Bounds
    from rebalproof.model.group_protocol import protocol
    from rebalproof.properties.run_check import check_model

    b = Bounds(**bounds)
    with resolve("ha") as ha:
        runs = {
            role: check_model(protocol=protocol("cooperative"), assignor=ha if role is None else _one_label(ha, role),
                              assignor_name="ha", rules="ha", bounds=b)
            for role in (None, "standby", "warmup")
        }
    statuses = {role: {r.property.name: r.verdict.status.value for r in run.results} for role, run in runs.items()}
    assert statuses["standby"] == statuses[None]
    assert statuses["warmup"] == statuses[None]
