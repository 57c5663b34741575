"""The solver's rules accept every answer the seeds write out (the seeds are the specification)."""

import pytest

from rebalproof.model import seeds429, seeds441
from rebalproof.solver import conforms, violations

SEED_429 = [(s.name, r.round, r) for s in seeds429.SCENARIOS for r in s.rebalances]


@pytest.mark.parametrize("scenario, round_, rebalance", SEED_429, ids=[f"{s}-{r}" for s, r, _ in SEED_429])
def test_kip429_seed_answers_keep_the_learner_rules(scenario, round_, rebalance):
    assert violations(rebalance.view, rebalance.expected, "learner") == ()


def test_a_leaving_member_gets_back_only_a_task_it_revoked_with_state():
    """Scale down, round 2: S2 revoked T3 at the join and gets it back; a stranger task it may not get."""
    rebalance = seeds429.scenario("scale-down").rebalances[1]
    assert conforms(rebalance.view, rebalance.expected, "learner").holds
    moved = {m: {r: list(getattr(a, r)) for r in ("active", "standby", "warmup")} for m, a in rebalance.expected.members}
    moved["S2"]["active"].append("T5")
    moved["S3"]["active"].remove("T5")
    from rebalproof.model.assignment import Assignment

    names = [v.name for v in violations(rebalance.view, Assignment.build(moved), "learner")]
    assert "leaving[T5@S2]" in names


@pytest.mark.parametrize("rebalance", seeds441.SCENARIOS, ids=lambda r: f"{r.scenario}-{r.round}")
def test_kip441_seed_answers_keep_the_ha_rules(rebalance):
    assert violations(rebalance.view, rebalance.expected, "ha") == ()
