"""Rebalances a member requests in a quiescent group: judged, not explored (``GroupModel.requested_probes``).

Red team 10's finding 3: at the sticky defaults a settled, balanced layout was shown to the leader
again on 2 of 36 views (every join and every leave unbalances four tasks on three members), so an
assignor dealing a balanced layout again whenever asked passed every sticky and eager default.
A consumer may ask for a rebalance with nothing changed (``enforceRebalance``, a metadata change):
``check`` now asks the assignor about each expanded quiescent state's view (under the rule sets
promising ``fixpoint``) and judges every answer, without exploring on from it (docs/DESIGN.md,
"Requested rebalances"). Seed 002, requirement 5: "The algorithm must converge: if the current assignment is
already balanced, it must not alter the assignment."
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rebalproof.cli.main import main
from rebalproof.errors import InputError
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_model import GroupModel
from rebalproof.model.group_protocol import protocol
from rebalproof.model.group_state import Action
from rebalproof.properties import Status
from rebalproof.traces.format import decode_trace
from red_checks import check_verdicts

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def at_root(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.chdir(ROOT)


def test_dealing_a_balanced_layout_again_is_caught_at_the_sticky_defaults():
    bad = check_verdicts("tests.assignors.red10_sticky:antisticky", proto="cooperative", rules="sticky", bounds=Bounds())
    violated = {n: v for n, v in bad.items() if v.status is Status.VIOLATED}
    assert set(violated) == {"fixpoint"}, {n: v.message for n, v in violated.items()}
    assert "the current assignment is valid, balanced and caught up, but the answer changes it" in violated["fixpoint"].message


@pytest.mark.parametrize("proto, rules", [("cooperative", "sticky"), ("eager", "eager")])
def test_standbys_moved_on_whenever_asked_are_caught_at_the_defaults(proto, rules):
    """Red team 12's standby churn, as a pure function (tests/assignors/red12_standby.py)."""
    verdicts = check_verdicts("tests.assignors.red12_standby:rotate_standbys", proto=proto, rules=rules, bounds=Bounds())
    assert {n for n, v in verdicts.items() if v.status is Status.VIOLATED} == {"fixpoint"}


@pytest.mark.parametrize("spec, proto, rules", [
    ("red10_sticky:antisticky", "cooperative", "sticky"),
    ("red12_standby:rotate_standbys", "cooperative", "sticky"),
    ("red12_standby:rotate_standbys", "eager", "eager"),
])
def test_without_requested_rebalances_the_defaults_pass_them(monkeypatch, spec, proto, rules):
    """What catches them is the requested rebalance: with it switched off they keep every promise."""
    from rebalproof.properties import run

    made = run.RunMonitor.__init__

    def without(self, *args, **kwargs):
        made(self, *args, **kwargs)
        self._requests = False

    monkeypatch.setattr(run.RunMonitor, "__init__", without)
    verdicts = check_verdicts(f"tests.assignors.{spec}", proto=proto, rules=rules, bounds=Bounds())
    assert not [n for n, v in verdicts.items() if v.status is Status.VIOLATED]


@pytest.mark.parametrize("proto, rules", [("cooperative", "sticky"), ("eager", "eager")])
def test_the_same_deal_keeping_the_extra_task_where_it_is_keeps_every_promise(proto, rules):
    verdicts = check_verdicts("tests.assignors.red10_sticky:keep_then_deal", proto=proto, rules=rules, bounds=Bounds())
    assert not {n: v.message for n, v in verdicts.items() if v.status is Status.VIOLATED}
    assert verdicts["fixpoint"].measure["premise_views"] >= 20  # was 2 before requested rebalances were judged


def test_the_counterexample_ends_with_the_requested_rebalance_and_replays(at_root, tmp_path, capsys):
    args = ["check", "--rules", "sticky", "--assignor", "py:tests.assignors.red10_sticky:antisticky", "--trace-dir", str(tmp_path)]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "rebalance (requested in a quiescent group)" in out
    row = next(line for line in out.splitlines() if line.startswith("fixpoint "))
    assert "violated      36 of 981 distinct views break it" in row  # README "Requested rebalances" (boundary lags on, as for py:)
    (path,) = tmp_path.glob("*--fixpoint.json")
    raw = json.loads(path.read_text())
    last = raw["steps"][-1]
    assert last["action"] == {"kind": "rebalance", "choice": 0, "requested": True}
    assert not raw["steps"][-2]["state"]["triggers"] and last["rebalance"]["input"]["previous_members"]
    assert main(["replay", str(path), "--quiet"]) == 0
    assert "claim confirmed: fixpoint fails at step" in capsys.readouterr().out
    assert main(["show", str(path)]) == 0
    assert "a member asks for this rebalance in a quiescent group" in capsys.readouterr().out


def test_judged_alike_with_and_without_partial_order_reduction(at_root):
    """Inside the reduced region the reduction skips orders of restores and aging, but keeps
    every quiescent state while requested rebalances are judged: both explorations ask the same
    views."""
    from rebalproof.model.assignors.spec import resolve
    from rebalproof.properties.run_check import check_model

    results = []
    for por in (True, False):
        with resolve("py:tests.assignors.red10_sticky:antisticky") as assignor:
            results.append(check_model(protocol=protocol("cooperative"), assignor=assignor, bounds=Bounds(), rules="sticky", symmetry=False, por=por))
    reduced, full = results
    assert reduced.exploration.states < full.exploration.states
    assert reduced.calls == full.calls
    for r in full.results:
        other = reduced.result(r.property.name)
        assert (other.verdict.status, other.verdict.measure) == (r.verdict.status, r.verdict.measure), r.property.name


def test_an_assignor_failing_only_when_nothing_changed_is_a_finding_on_that_view(at_root, tmp_path, capsys):
    args = ["check", "--rules", "sticky", "--assignor", "py:tests.assignors.requested_crash:assign", "--events", "1", "--trace-dir", str(tmp_path)]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "exploration complete" in out and "violated: assignor-answers (15 holds, 1 violated" in out
    (path,) = tmp_path.glob("*--assignor-answers.json")
    raw = json.loads(path.read_text())
    assert raw["steps"][-1]["action"] == {"kind": "rebalance", "choice": 0, "requested": True}
    assert "cannot answer a group that nothing changed in" in raw["steps"][-1]["error"]
    assert main(["replay", str(path), "--quiet"]) == 0


def test_a_requested_rebalance_runs_only_in_a_quiescent_group():
    from rebalproof.model.assignors import builtin

    model = GroupModel(protocol=protocol("cooperative"), bounds=Bounds(), assignor=builtin("sticky").make(), assignor_name="sticky")
    (start,) = model.init_states()
    probes = model.requested_probes(start)
    assert probes and all(key is not None and a.requested and a.kind == "rebalance" for key, a, _ in probes)
    _, requested, step = probes[0]
    after = model.next_state(start, requested)
    assert after is not None and after.pending and not after.triggers  # a rebalance ran: its answer is being delivered
    assert model.rebalance_step(start, requested).assignment == step.assignment
    assert model.next_state(after, requested) is None  # deliveries pending: not quiescent
    assert model.requested_probes(after) == []
    joined = model.next_state(start, Action("join", member="I3"))
    assert model.next_state(joined, requested) is None and model.next_state(start, Action("rebalance")) is None
    assert requested not in model.actions(start)  # judged, not explored
    assert Action.from_json(requested.to_json()) == requested and "requested" not in Action("rebalance").to_json()


def test_a_trace_marking_a_triggered_rebalance_requested_is_refused(at_root, tmp_path):
    assert main(["check", "--rules", "sticky", "--assignor", "py:tests.assignors.red10_sticky:antisticky", "--quiet",
                 "--trace-dir", str(tmp_path)]) == 1
    (path,) = tmp_path.glob("*--fixpoint.json")
    raw = json.loads(path.read_text())
    first = next(i for i, s in enumerate(raw["steps"]) if s["action"]["kind"] == "rebalance")
    raw["steps"][first]["action"]["requested"] = True  # a join's rebalance: a trigger was pending
    with pytest.raises(InputError, match="requested marks a rebalance asked for in a quiescent group"):
        decode_trace(raw)


@pytest.mark.parametrize("spec, rules, bounds, expected", [
    ("red13:swap_stateless_while_restoring", "sticky", Bounds(stateless=2), "stable"),
    ("red13:restoring_to_least_loaded", "ha", Bounds(standbys=0), "caught-up-active"),
])
@pytest.mark.parametrize("por", [True, False])
def test_asked_again_while_an_active_restores_is_judged_too(spec, rules, bounds, expected, por):
    """Red team 13: the first version asked only views meeting fixpoint's premise (every active
    caught up), so bugs that show only when the group is asked again while an active restores
    passed. Every quiescent view is asked now, after the last membership event too, where
    partial-order reduction keeps every quiescent state (asked only at the ends of its region,
    these two needed --events 3)."""
    verdicts = check_verdicts(f"tests.assignors.{spec}", proto="cooperative", rules=rules, bounds=bounds, por=por)
    assert verdicts[expected].status is Status.VIOLATED, verdicts[expected].message


def test_the_report_says_how_many_views_were_asked_again(at_root, capsys):
    assert main(["check", "--rules", "sticky", "--assignor", "py:tests.assignors.red10_sticky:keep_then_deal", "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["requested_views"] > 0
    assert main(["check", "--rules", "sticky", "--assignor", "py:tests.assignors.red10_sticky:keep_then_deal"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2] == f"requested rebalances: {report['requested_views']:,} views of quiescent states also asked with nothing changed (judged, not explored)"
    assert main(["check", "--protocol", "learner", "--assignor", "learner", "--json", "--quiet"]) in (0, 1)
    assert "requested_views" not in json.loads(capsys.readouterr().out)  # not asked under the learner rules


@pytest.mark.parametrize("boundary_lags", [True, False])
def test_a_settled_layout_is_asked_again_at_its_boundary_readings(boundary_lags):
    """Red team 14: an assignor ranking caught-up copies by their raw lag in its "already balanced?"
    test (seed 002: "Rank has a floor of acceptable_recovery_lag") moves a standby when the group is
    asked again with its holder reporting exactly the limit. The requested rebalances were asked at
    the canonical lags only, so it passed the defaults (caught only by ``converges`` at --partitions
    3); with boundary lags (the default for py: and exec:) each requested view is asked at its
    readings too, and ``fixpoint`` names it. The same assignor without the bug keeps every promise."""
    bounds = Bounds(boundary_lags=boundary_lags)
    verdicts = check_verdicts("tests.assignors.red14_ha:bug_standby_rank_unfloored", proto="cooperative", rules="ha", bounds=bounds)
    assert (verdicts["fixpoint"].status is Status.VIOLATED) is boundary_lags, verdicts["fixpoint"].message
    correct = check_verdicts("tests.assignors.red14_ha:assign", proto="cooperative", rules="ha", bounds=Bounds(boundary_lags=True))
    assert not {n: v.message for n, v in correct.items() if v.status is Status.VIOLATED}


def test_the_trace_of_a_requested_rebalance_at_a_reading_replays(at_root, tmp_path, capsys):
    args = ["check", "--assignor", "py:tests.assignors.red14_ha:bug_standby_rank_unfloored", "--symmetry", "off", "--trace-dir", str(tmp_path)]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "rebalance (lags: hosts-at-limit) (requested in a quiescent group)" in out
    (path,) = tmp_path.glob("*--fixpoint.json")
    raw = json.loads(path.read_text())
    assert raw["steps"][-1]["action"] == {"kind": "rebalance", "choice": 0, "lags": "hosts-at-limit", "requested": True}
    assert main(["replay", str(path), "--quiet"]) == 0
    assert "claim confirmed: fixpoint fails at step" in capsys.readouterr().out
    assert main(["show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "a member asks for this rebalance in a quiescent group" in shown and "acceptable_recovery_lag" in shown
