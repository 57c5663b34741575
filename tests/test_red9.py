"""Red team 9 (2026-11-29): a KIP-429 learner assignor written from seed 001 alone
(``tests/assignors/red9_learner.py``), variants in the choices the seed leaves open, seeded bugs.

- ``learners-kept`` faulted it, and the built-in learner assignor on a hand-made view, for
  dropping a restoring standby beside a caught-up copy: caught-up copies (a leaving member's
  too) filled the standby slots first, so the restoring one counted as a learner. Now the
  restoring copies fill the slots first; a caught-up copy may be the learner ("we shall
  prioritize workers which currently have standby tasks that match learner assignment").
- ``stateless-at-once`` missed a stateless task given a learning stage (a copy beyond its active)
  on a new member.
"""

from __future__ import annotations

import pytest

from rebalproof.model.assignors import builtin
from rebalproof.model.codec import decode_input
from rebalproof.model.group_bounds import Bounds
from rebalproof.properties import check_assignment
from red_checks import check_verdicts


def run(variant: str, bounds: Bounds):
    return check_verdicts(f"tests.assignors.red9_learner:{variant}", proto="learner", rules="learner", bounds=bounds)


@pytest.mark.parametrize(
    "variant, bounds",
    [
        ("correct", Bounds(start="cold", subtopologies=1)),  # learners-kept faulted 2 views before
        ("v_omit", Bounds(standbys=0)),  # empty lists left out
        # also run once, not here (for time): correct, v_direct and v_sbany at --stateless 2
        # (71,161 / 176,306 / 26,311 states), v_rev at the defaults
    ],
)
def test_red_team_9s_learner_assignor_keeps_every_promise(variant, bounds):
    bad = {name: v.message for name, v in run(variant, bounds).items() if v.status.name == "VIOLATED"}
    assert not bad, bad


def test_the_built_in_learner_assignor_may_drop_a_restoring_standby_beside_a_caught_up_one():
    """Red team 9's view: one standby slot of 0_0, a caught-up standby on I2 and a restoring one
    on I3; the built-in answer keeps I2's and drops I3's, and keeps every learner promise."""
    view = decode_input({
        "config": {"num_standby_replicas": 1, "acceptable_recovery_lag": 10000, "max_warmup_replicas": 2},
        "tasks": [{"id": "0_0"}, {"id": "0_1"}],
        "members": [
            {"id": "I1", "active": ["0_0"], "lags": {"0_0": 0}},
            {"id": "I2", "active": ["0_1"], "standby": ["0_0"], "lags": {"0_0": 0, "0_1": 0}},
            {"id": "I3", "standby": ["0_0", "0_1"], "lags": {"0_0": 10001, "0_1": 10001}},
        ],
        "previous_members": ["I1", "I2", "I3"],
    })
    answer = builtin("learner").make()(view)
    assert "0_0" not in answer.of("I3").copies and "0_0" in answer.of("I2").standby
    verdicts = {v.property: v for v in check_assignment(view, answer, rules="learner")}
    assert verdicts["learners-kept"].holds, verdicts["learners-kept"].message


def test_a_stateless_task_given_a_learning_stage_is_caught():
    verdicts = run("b_stateless_learning_stage", Bounds(stateless=2, initial=1, instances=2, events=1))
    violated = {name for name, v in verdicts.items() if v.status.name == "VIOLATED"}
    assert violated == {"stateless-at-once"}, violated
    assert "a learning stage" in verdicts["stateless-at-once"].message


@pytest.mark.parametrize("spec", ["tests.assignors.red9_learner:b_orphan_to_leaving", "tests.assignors.red5_learner:leaving_gets_new_active"])
def test_an_ownerless_task_dealt_cold_to_a_leaving_member_is_caught(spec):
    """Red team 9 (F4): a task whose owner left, with no copy anywhere, dealt to the member that is
    shutting down ("resource available instances" counting its load as none) passed every
    property; red team 5's seeded bug of the same kind was caught only at --instances 4."""
    found = check_verdicts(spec, proto="learner", rules="learner", bounds=Bounds(standbys=0, initial=3, subtopologies=1))
    violated = {name for name, v in found.items() if v.status.name == "VIOLATED"}
    assert violated == {"staying-learners"}, violated
    assert "is leaving but is given the active of" in found["staying-learners"].message
    assert "(which it did not hold and has no state for: it must restore from nothing)" in found["staying-learners"].message
