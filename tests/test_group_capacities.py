"""Stream threads in the group model (issue 14): ``--capacities`` in the bounds, the leader's view,
the balance the run properties measure, symmetry that only merges instances of equal capacity,
and a wrong assignor whose bug needs a member with two threads."""

from __future__ import annotations

import json
from fractions import Fraction
import itertools

import pytest

from rebalproof.cli.main import main
from rebalproof.errors import InputError
from rebalproof.model.assignment import Assignment
from rebalproof.model.group_bounds import Bounds, load_scenario
from rebalproof.model.group_fingerprint import Fingerprinter
from rebalproof.model.group_model import GroupModel
from rebalproof.model.group_protocol import protocol
from rebalproof.model.group_state import GroupState, MemberState
from rebalproof.model.codec import decode_input
from rebalproof.properties.run_check import check_model
from rebalproof.properties.run import progress_bound
from rebalproof.symmetry import sample_renamings
from rebalproof.traces.render_text import header_lines

BY_INSTANCE = "py:tests.capacity_assignors:by_instance"


class ThreadBalanced:
    """Nondeterministic and equivariant: owned actives stay, the rest go anywhere that keeps the
    load per thread as even as possible (least sum of load**2 / capacity). It reads capacities and
    never names, so renaming instances of equal capacity renames its answers."""

    name = "thread-balanced"

    def choices(self, view):
        keep = {m: [t for t in view.task_ids if view.owners(t) == (m,)] for m in view.member_ids}
        loose = [t for t in view.task_ids if len(view.owners(t)) != 1]
        best, out = None, []
        for targets in itertools.product(view.member_ids, repeat=len(loose)):
            loads = {m: len(keep[m]) for m in view.member_ids}
            for m in targets:
                loads[m] += 1
            cost = sum(Fraction(n * n, view.member(m).capacity) for m, n in loads.items())
            if best is None or cost < best:
                best, out = cost, []
            if cost == best:
                roles = {m: {"active": list(keep[m])} for m in view.member_ids}
                for t, m in zip(loose, targets):
                    roles[m]["active"].append(t)
                out.append(Assignment.build(roles))
        return tuple(out)


def test_capacities_are_kept_in_shortest_form_and_repeat_their_last_value():
    b = Bounds(capacities=(1, 2, 2))
    assert b.capacities == (1, 2) and b == Bounds(capacities=[1, 2]) == Bounds(capacities="1,2")
    assert [b.capacity_at(i) for i in range(3)] == [1, 2, 2] and b.describe_capacities() == "1,2,2"
    assert "capacities" not in Bounds().to_json() and Bounds(capacities=(1, 1)).to_json() == Bounds().to_json()
    assert Bounds(**b.to_json()) == b and b.to_json()["capacities"] == [1, 2]


@pytest.mark.parametrize("bad", [(0,), (1, -1), (), "1,x", (True,), (1, 2, 3, 4)])
def test_bad_capacities_are_input_errors(bad):
    with pytest.raises(InputError) as info:
        Bounds(capacities=bad)
    assert "capacities" in str(info.value)


@pytest.mark.parametrize("flag, says", [("0,1", "at least 1"), ("1,two", "whole numbers"), ("1,2,3,1", "at most one per instance")])
def test_check_rejects_bad_capacities_with_one_line_and_exit_2(capsys, flag, says):
    code = main(["check", "--capacities", flag])
    err = capsys.readouterr().err
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_scenario_files_take_capacities(tmp_path):
    path = tmp_path / "threads.toml"
    path.write_text("instances = 3\ncapacities = [2, 1]\n")
    assert Bounds(**load_scenario(path)).describe_capacities() == "2,1,1"


def test_the_leaders_view_and_the_warm_start_carry_the_capacities():
    from rebalproof.model.assignors import builtin

    bounds = Bounds(capacities=(1, 2))
    model = GroupModel(protocol=protocol("cooperative"), bounds=bounds, assignor=builtin("ha").make())
    (start,) = model.init_states()
    loads = {m.id: len(m.active) for m in start.members}
    assert loads == {"I1": 1, "I2": 3}  # the warm start is balanced per thread, not per instance
    joined = model.next_state(start, next(a for a in model.actions(start) if a.kind == "join"))
    view = model.view_of(joined)
    assert {m.id: m.capacity for m in view.members} == {"I1": 1, "I2": 2, "I3": 2}


def test_symmetric_fingerprints_never_merge_instances_of_different_capacity():
    a = GroupState(members=(MemberState(id="I1", active=("0_0",)), MemberState(id="I2")), leader="I1", memory=None, spawned=2, events=0)
    b = GroupState(members=(MemberState(id="I1"), MemberState(id="I2", active=("0_0",))), leader="I1", memory=None, spawned=2, events=0)
    b = b._replace(leader="I2")
    same = Fingerprinter(("0_0",), symmetry=True)
    classes = Fingerprinter(("0_0",), symmetry=True, classes={"I1": 1, "I2": 2})
    assert same(a) == same(b)
    assert classes(a) != classes(b)
    equal = Fingerprinter(("0_0",), symmetry=True, classes={"I1": 2, "I2": 2})
    assert equal(a) == equal(b)


def test_sampled_renamings_stay_within_capacity_classes():
    view = decode_input({"tasks": [{"id": "0_0"}, {"id": "0_1"}],
                         "members": [{"id": f"I{i}", "capacity": c} for i, c in enumerate((1, 2, 2, 1), start=1)]})
    classes = {m.id: m.capacity for m in view.members}
    moved = set()
    for r in sample_renamings(view, samples=40, seed=1, classes=classes):
        for a, b in r.members:
            assert classes[a] == classes[b]
            moved.add(a)
    assert moved == {"I1", "I2", "I3", "I4"}


def _statuses(result):
    return {r.property.name: r.verdict.status for r in result.results}


def test_symmetry_with_mixed_capacities_reduces_and_keeps_every_verdict():
    bounds = Bounds(instances=4, initial=3, subtopologies=1, partitions=3, standbys=0, events=1, capacities=(2, 1))
    kwargs = dict(protocol=protocol("cooperative"), assignor_name="thread-balanced", rules=None, bounds=bounds)
    off = check_model(assignor=ThreadBalanced(), symmetry=False, **kwargs)
    on = check_model(assignor=ThreadBalanced(), symmetry=True, **kwargs)
    auto = check_model(assignor=ThreadBalanced(), symmetry="auto", **kwargs)
    assert off.exploration.complete and on.exploration.complete
    assert on.exploration.states < off.exploration.states
    assert _statuses(on) == _statuses(off) == _statuses(auto)
    assert auto.symmetry_check.reduce and auto.exploration.states == on.exploration.states


def run(capsys, *args):
    code = main(["check", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_bug_that_needs_two_threads_is_caught_with_capacities_and_missed_without(capsys, tmp_path):
    code, report = run(capsys, "--assignor", BY_INSTANCE)
    assert code == 0 and all(p["status"] != "violated" for p in report["properties"])
    code, report = run(capsys, "--assignor", BY_INSTANCE, "--capacities", "1,2", "--trace-dir", str(tmp_path))
    converges = next(p for p in report["properties"] if p["property"] == "converges")
    assert code == 1 and converges["status"] == "violated" and "not balanced" in converges["message"]
    trace = json.loads(open(report["traces"]["converges"]).read())
    assert trace["bounds"]["capacities"] == [1, 2]
    assert "capacities I1=1, I2=2, I3=2 threads" in header_lines(trace)[1]


def test_the_bounds_line_shows_the_capacities(capsys):
    main(["check", "--assignor", "round-robin", "--instances", "2", "--initial", "2", "--subtopologies", "1",
          "--partitions", "2", "--standbys", "0", "--events", "0", "--capacities", "2,1"])
    assert "capacities 2,1 threads" in capsys.readouterr().out


def _one_warmup(view):
    """``ha``, except that it plans with one warmup where ``max_warmup_replicas`` allows more: slower
    than KIP-441 means ("limits the number of extra tasks that can be assigned at a time")."""
    from rebalproof.model.assignment import ROLES
    from rebalproof.model.assignors import builtin

    answer = builtin("ha").make()(view)
    roles = {m: {r: list(getattr(a, r)) for r in ROLES} for m, a in answer.members}
    first = True
    for m in sorted(roles):
        roles[m]["warmup"] = roles[m]["warmup"][:1] if first else []
        first = first and not roles[m]["warmup"]
    return Assignment.build(roles, probing_rebalance=answer.probing_rebalance)


def test_rebalances_that_only_realize_planned_moves_are_not_decisive_and_slow_planning_is_measured():
    """With capacities 1,2 the joiner's copies restore one by one: ha realizes them in separate
    rebalances, which the bound does not charge. An assignor that plans one warmup per round
    where two are allowed is slower than Kafka's pace (2x3 tasks: ceil(6/2)+1 = 4, reported as
    ``rebalance_bound``) but keeps the promise, the progress bound 6 + 1: max_warmup_replicas is
    a maximum (KIP-441 "setting the number high would allow the algorithm to assign all the
    desired movements in one shot")."""
    from rebalproof.model.assignors import builtin

    cooperative = protocol("cooperative")
    ha = check_model(protocol=cooperative, assignor=builtin("ha").make(), assignor_name="ha", rules="ha",
                     bounds=Bounds(capacities=(1, 2)))
    measure = ha.result("converges").verdict.measure
    assert ha.status("converges").value == "holds" and measure["worst_rebalances_after_join"] <= measure["rebalance_bound"] == 3
    wide = Bounds(subtopologies=2, partitions=3, events=1)
    assert check_model(protocol=cooperative, assignor=builtin("ha").make(), assignor_name="ha", rules="ha",
                       bounds=wide).status("converges").value == "holds"
    slow = check_model(protocol=cooperative, assignor=_one_warmup, assignor_name="one-warmup", rules="ha", bounds=wide)
    verdict = slow.result("converges").verdict
    assert verdict.status.value == "holds", verdict.message
    assert verdict.measure["rebalance_bound"] == 4 < verdict.measure["worst_rebalances_after_join"] <= progress_bound(wide) == 7



def _suite_checks():
    from rebalproof.pipeline.suite import DEFAULT_SUITE, load_suite

    # the pairings at their own bounds; the "<pair>@<tier>" checks widen one bound at 1 thread
    return tuple(c for c in load_suite(DEFAULT_SUITE).checks if "@" not in c.name)


@pytest.mark.parametrize("capacities", [(1, 2), (2, 1)], ids=["1,2", "2,1,1"])
@pytest.mark.parametrize("spec", _suite_checks(), ids=lambda s: s.name)
def test_every_pairing_of_the_default_suite_gets_its_expected_verdicts_with_mixed_capacities(spec, capacities):
    """Calibration (issue 14): every pairing of the default suite, at its bounds with 1,2 and 2,1,1
    stream threads, explores completely and gets exactly the verdicts the suite expects at 1 thread
    everywhere (the references keep every promise; the known findings stay found)."""
    from rebalproof.model.group_assignor import resolve_for_model
    from rebalproof.model.group_protocol import parse_protocol

    bounds = Bounds(**dict(spec.bounds), capacities=capacities)
    with resolve_for_model(spec.assignor) as resolved:
        rules = resolved.rules if spec.rules is None else (None if spec.rules == "none" else spec.rules)
        result = check_model(protocol=parse_protocol(spec.protocol), assignor=resolved.assignor,
                             assignor_name=resolved.name, rules=rules, bounds=bounds)
    assert result.exploration.complete
    wrong = {}
    for r in result.results:
        observed = r.verdict.status.value
        expected = spec.expect(r.property.name, observed).status
        if observed != expected:
            wrong[r.property.name] = (observed, expected, r.verdict.message)
    assert not wrong


def test_two_copies_on_a_two_thread_member_is_caught_with_capacities_and_missed_without(capsys):
    code, report = run(capsys, "--assignor", "py:tests.capacity_assignors:two_copies", "--symmetry", "off")
    assert code == 0 and all(p["status"] != "violated" for p in report["properties"])
    code, report = run(capsys, "--assignor", "py:tests.capacity_assignors:two_copies", "--symmetry", "off", "--capacities", "1,2")
    colocation = next(p for p in report["properties"] if p["property"] == "no-colocation")
    assert code == 1 and colocation["status"] == "violated" and "twice (active and standby)" in colocation["message"]


def test_the_html_viewer_and_the_verify_report_show_the_capacities(capsys, tmp_path):
    from rebalproof.pipeline.report import _reproduce
    from rebalproof.pipeline.suite import load_suite
    from rebalproof.traces.render_html import render_html
    from rebalproof.traces.replay import load_trace

    main(["check", "--assignor", BY_INSTANCE, "--capacities", "1,2", "--symmetry", "off", "--trace-dir", str(tmp_path)])
    capsys.readouterr()
    page = render_html(load_trace(next(tmp_path.glob("*converges.json"))))
    assert "capacities I1=1, I2=2, I3=2 threads" in page
    suite = tmp_path / "suite.toml"
    suite.write_text('[suite]\nname = "threads"\n\n[[check]]\nname = "ha-threads"\nprotocol = "cooperative"\n'
                     'assignor = "ha"\nbounds = { events = 1, capacities = [1, 2] }\n')
    (spec,) = load_suite(suite).checks
    assert "--capacities 1,2" in _reproduce({"spec": spec.to_json()})
    assert Bounds(**dict(spec.bounds)).capacities == (1, 2)


def test_settled_balance_the_oracle_cannot_decide_makes_converges_inconclusive(monkeypatch):
    """Three-valued: a settled state that is not balanced per thread, where the oracle's search
    cannot tell whether any balanced assignment exists, is neither a pass nor a violation."""
    from rebalproof.model.assignors import builtin
    from rebalproof.properties import run as run_module

    monkeypatch.setattr(run_module, "balance_attainable", lambda view: None)
    monkeypatch.setattr(run_module, "balanced_either", lambda view, assignment: False)
    result = check_model(protocol=protocol("cooperative"), assignor=builtin("ha").make(), assignor_name="ha", rules="ha",
                         bounds=Bounds(instances=2, initial=2, subtopologies=1, partitions=2, events=0, capacities=(1, 2)))
    verdict = result.result("converges").verdict
    assert verdict.status.value == "inconclusive" and verdict.measure["undecided_balance_states"] >= 1
    assert "undecided" in verdict.message


@pytest.mark.parametrize("capacities, caught", [((1, 2), False), ((2, 1), True)])
def test_a_capacity_bug_may_show_in_one_order_of_the_capacities_only(capacities, caught):
    """The README's "run both orders": red team 14's assignor, ties broken toward the highest id,
    reading every member as one thread, puts the odd task on the two-thread member when that one
    has the higher id (balanced per thread by luck) and on the one-thread member otherwise."""
    from red_checks import check_verdicts
    from rebalproof.properties.verdict import Status

    verdicts = check_verdicts("tests.assignors.red14_ha:bug_ignore_capacity", proto="cooperative", rules="ha",
                              bounds=Bounds(capacities=capacities, boundary_lags=True))
    assert (verdicts["balanced"].status is Status.VIOLATED) is caught, verdicts["balanced"].message
