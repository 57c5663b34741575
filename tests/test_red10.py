"""Red team 10 (2026-11-29): the sticky and eager rules, an independent sticky assignor speaking the
exec protocol from Node.js, its variants and seeded bugs.

Its one miss that the seeds decide: an assignor dealing every task round-robin afresh at every
rebalance, balanced but never sticky, kept every sticky and eager promise at every bound tried
(``tests/assignors/red10_sticky.py`` writes it again in Python). Now ``stable`` under those rules
also faults a *needless exchange* of stateful actives (``properties/sticky_moves.py``): an owner
passing its own task on while taking another owner's, where trading the two keeps every count,
moves less, is no less balanced and no less caught up. Seed 002: "the more "sticky" the
assignment in Streams the better, so we tend to avoid this kind of simple round-robin assignment
on subsequent rebalances".
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from rebalproof.model.group_bounds import Bounds
from rebalproof.model.view import RebalanceInput
from rebalproof.properties import Status, check_assignment
from rebalproof.properties.stability import stable_sticky
from red_checks import check_verdicts
from test_properties_assignment import answer, view_of


def run(variant: str, proto: str, rules: str, bounds: Bounds):
    return check_verdicts(f"tests.assignors.red10_sticky:{variant}", proto=proto, rules=rules, bounds=bounds)


@pytest.mark.parametrize("proto, rules", [("cooperative", "sticky"), ("eager", "eager")])
def test_a_round_robin_deal_afresh_at_every_rebalance_is_caught(proto, rules):
    verdicts = run("round_robin_afresh", proto, rules, Bounds())
    bad = {name for name, v in verdicts.items() if v.status is Status.VIOLATED}
    assert bad == {"stable"}, bad
    assert "stateful actives exchanged without need: 1_0 from I1 to I3 while I1 is given 1_1 from I2" in verdicts["stable"].message


@pytest.mark.parametrize("proto, rules, bounds", [
    ("cooperative", "sticky", Bounds(stateless=2, capacities=(1, 2))),
    ("eager", "eager", Bounds(instances=4, initial=3)),
])
def test_the_same_deal_keeping_each_owners_share_first_keeps_every_promise(proto, rules, bounds):
    bad = {name: v.message for name, v in run("keep_then_deal", proto, rules, bounds).items() if v.status is Status.VIOLATED}
    assert not bad, bad


def test_ids_whose_string_and_natural_orders_differ_show_an_assignor_mixing_them():
    """Red team 10: ``check`` named its instances I1 .. I9 only, where string and natural order
    agree, so an assignor mixing the two (shares worked out in one order, handed out in the
    other) was correct on every view it could be shown. ``--first-id 8`` names them I8, I9, I10."""
    def verdicts(first_id):
        return run("mixed_orders", "cooperative", "sticky", Bounds(partitions=1, first_id=first_id))

    assert not [n for n, v in verdicts(1).items() if v.status is Status.VIOLATED]
    bad = {n: v.message for n, v in verdicts(8).items() if v.status is Status.VIOLATED}
    assert set(bad) == {"fixpoint"} and "the current assignment is valid, balanced and caught up" in bad["fixpoint"], bad
    assert Bounds(first_id=8).member_ids == ("I8", "I9", "I10") and "first_id" not in Bounds().to_json()


def test_a_trace_over_ids_from_i8_replays(tmp_path, capsys, monkeypatch):
    from rebalproof.cli.main import main

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent))
    args = ["check", "--rules", "sticky", "--assignor", "py:tests.assignors.red10_sticky:mixed_orders", "--partitions", "1",
            "--first-id", "8", "--quiet", "--trace-dir", str(tmp_path)]
    assert main(args) == 1
    (trace,) = tmp_path.glob("*--fixpoint.json")
    assert json.loads(trace.read_text())["bounds"]["first_id"] == 8
    capsys.readouterr()
    assert main(["replay", str(trace), "--quiet"]) == 0
    assert "claim confirmed: fixpoint fails at step 2" in capsys.readouterr().out


def _view(members, tasks=("0_0", "0_1", "1_0", "1_1"), previous=None, **config) -> RebalanceInput:
    view = view_of(list(tasks), members, **config)
    return view if previous is None else replace(view, previous_members=previous)


def _stable(view, given) -> dict[str, Status]:
    return {rules: next(v for v in check_assignment(view, given, rules=rules) if v.property == "stable").status
            for rules in ("sticky", "eager", "ha")}


def test_needless_exchanges_judged_and_spared():
    both = {"0_0": 0, "0_1": 0}
    join = _view([dict(id="I1", active=("0_0", "0_1"), lags=both), dict(id="I2", active=("1_0", "1_1"), lags={"1_0": 0, "1_1": 0}),
                  dict(id="I3")], previous=("I1", "I2"))
    # the red team's oracle case: every task moved at a join where one move was needed (the
    # exchange is across subtopologies: trading them back spreads each subtopology as well)
    shuffled = answer(I1="1_0 1_1", I2="0_0", I3="0_1")
    assert _stable(join, shuffled) == {"sticky": Status.VIOLATED, "eager": Status.VIOLATED, "ha": Status.HOLDS}
    verdict = stable_sticky(join, shuffled)
    assert verdict.message.startswith("stateful actives exchanged without need: 0_0 from I1 to I2 while I1 is given 1_0 from I2")
    assert verdict.measure["exchanges"] == 4 and verdict.members == ("I1", "I2", "I3")
    # the sticky answer, and one that moves the other task of the busier member: no exchange
    for fine in (answer(I1="0_0 0_1", I2="1_0", I3="1_1"), answer(I1="0_1 0_0", I2="1_1", I3="1_0")):
        assert _stable(join, fine)["sticky"] is Status.HOLDS, fine
    # an exchange that spreads the subtopologies better is not needless: I1 ran both of
    # subtopology 0, I2 both of 1; giving I1 1_0 for 0_1 spreads both (the sticky rules measure
    # subtopology spread without promising it; an assignor may aim at it)
    spread = answer(I1="0_0 1_0", I2="1_1 0_1")
    two = _view([dict(id="I1", active=("0_0", "0_1"), lags=both), dict(id="I2", active=("1_0", "1_1"), lags={"1_0": 0, "1_1": 0})])
    assert _stable(two, spread)["sticky"] is Status.HOLDS
    # the receiver more caught up on what it got (a standby of 1_0) than on what it would get:
    # perhaps a restore avoided, not judged
    owners = [dict(id="I1", active=("0_0", "1_0"), lags={"0_0": 0, "1_0": 0}), dict(id="I2", active=("0_1", "1_1"), lags={"0_1": 0, "1_1": 0})]
    warm = _view([*owners, dict(id="I3", standby=("1_0",), lags={"1_0": 0})])
    assert _stable(warm, answer(I1="0_0 1_1", I2="0_1", I3="1_0"))["sticky"] is Status.HOLDS
    # with no state on I3 the same answer is a needless exchange
    cold = _view([*owners, dict(id="I3")])
    assert _stable(cold, answer(I1="0_0 1_1", I2="0_1", I3="1_0"))["sticky"] is Status.VIOLATED
    # red team 11: an owner may still be restoring its own task; trading back would block it.
    # A swap letting each active go to a caught-up copy, and the one balanced chain with every
    # active caught up, are not needless
    restoring = _view([dict(id="I1", active=("0_0",), standby=("0_1",), lags={"0_0": 0, "0_1": 0}),
                       dict(id="I2", active=("0_1",), standby=("0_0",), lags={"0_0": 0, "0_1": 10001})], tasks=("0_0", "0_1"),
                      num_standby_replicas=1)
    assert _stable(restoring, answer(I1="0_1 +0_0", I2="0_0 +0_1"))["sticky"] is Status.HOLDS
    chain = _view([dict(id="I1", active=("0_0",), standby=("0_1",), lags={"0_0": 10001, "0_1": 0}),
                   dict(id="I2", active=("0_1", "0_2"), lags={"0_1": 0, "0_2": 0}),
                   dict(id="I3", standby=("0_0", "0_2"), lags={"0_0": 0, "0_1": 0, "0_2": 0})],
                  tasks=("0_0", "0_1", "0_2"), num_standby_replicas=1)
    assert _stable(chain, answer(I1="0_1 +0_0", I2="0_2 +0_1", I3="0_0 +0_2"))["sticky"] is Status.HOLDS
    # the same swap between two caught-up owners is needless
    caught = _view([dict(id="I1", active=("0_0",), standby=("0_1",), lags={"0_0": 0, "0_1": 0}),
                    dict(id="I2", active=("0_1",), standby=("0_0",), lags={"0_0": 0, "0_1": 0})], tasks=("0_0", "0_1"),
                   num_standby_replicas=1)
    assert _stable(caught, answer(I1="0_1 +0_0", I2="0_0 +0_1"))["sticky"] is Status.VIOLATED
    # an orphan (its owner gone) given to the member holding its state, which passes its own
    # task on: Kafka's sticky assignors do this, and it is not judged
    orphan = _view([dict(id="I1", active=("0_0", "0_2"), standby=("0_1",), lags={"0_0": 0, "0_1": 0, "0_2": 0}), dict(id="I3")],
                   tasks=("0_0", "0_1", "0_2"), previous=("I1", "I2", "I3"))
    assert _stable(orphan, answer(I1="0_0 0_1", I3="0_2"))["sticky"] is Status.HOLDS
    # an owner marked leaving may be treated as gone
    leaving = _view([dict(id="I1", leaving=True, active=("0_0", "1_0"), lags={"0_0": 0, "1_0": 0}),
                     dict(id="I2", active=("0_1", "1_1"), lags={"0_1": 0, "1_1": 0}), dict(id="I3")])
    assert _stable(leaving, answer(I1="", I2="0_0 1_0", I3="0_1 1_1"))["sticky"] is Status.HOLDS
