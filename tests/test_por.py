"""Partial-order reduction (#11 item 2, :mod:`rebalproof.model.group_por`): the same verdicts, real runs.

- structure: every ample action commutes with every other enabled action (both orders enabled,
  one state reached), the reduced region is closed and has no rebalance, restores, aging and
  cleanup change nothing a state property reads, deliveries in it never revoke an active;
- metamorphic: on small random bounds, protocols and assignors (Hypothesis, the project's
  derandomized profile), every property gets the same verdict and every counterexample the same
  kind with and without POR, the reduced exploration has at most as many states, and its traces
  replay through the model;
- the level-synchronous proviso: an ample successor already discovered at a depth ``<= d`` makes
  the state expand in full.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from rebalproof.cli.main import main
from rebalproof.model.assignors import builtin
from rebalproof.model.explorer import explore
from rebalproof.model.group_assignor import resolve_for_model
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_model import GroupModel
from rebalproof.model.group_por import REDUCIBLE_KINDS, ample_action, ample_expand, quiet
from rebalproof.model.group_protocol import parse_protocol, protocol
from rebalproof.model.group_state import is_quiescent, is_stable
from rebalproof.properties.run_check import check_model
from rebalproof.traces.format import decode_trace

from test_manifest import replay


def model_of(proto: str, assignor: str, **bounds) -> GroupModel:
    with resolve_for_model(assignor) as resolved:
        return GroupModel(protocol=parse_protocol(proto), bounds=Bounds(**bounds), assignor=resolved.assignor,
                          assignor_name=resolved.name)


def reachable(model, limit: int = 3000):
    """Every state reachable without reduction (at most ``limit``), breadth-first."""
    seen, order = {model.init_states()[0]}, list(model.init_states())
    for s in order:
        for _, nxt in model.expand(s):
            if nxt not in seen and len(seen) < limit:
                seen.add(nxt)
                order.append(nxt)
    return order


MODELS = [
    ("eager", "sticky", dict(partitions=3)),
    ("cooperative", "round-robin", dict(subtopologies=1, partitions=3, standbys=1)),
    ("cooperative", "ha", dict()),
    ("learner", "learner", dict(standbys=0)),
    ("learner:leaving=false", "learner:version=1", dict()),
]


def test_ample_actions_commute_with_every_enabled_action_and_stay_in_the_region():
    reduced_somewhere = set()
    for proto, assignor, bounds in MODELS:
        model = model_of(proto, assignor, **bounds)
        for s in reachable(model):
            actions = model.actions(s)
            chosen = ample_action(model, s, actions)
            if not quiet(model, s):
                assert chosen is None
                continue
            for a in actions:  # the region: no rebalance, no membership event, closed
                assert a.kind in REDUCIBLE_KINDS, (a, s)
                assert quiet(model, model.next_state(s, a))
            if chosen is None:
                continue
            reduced_somewhere.add(proto)
            after = model.next_state(s, chosen)
            for b in actions:
                if b == chosen:
                    continue
                one = model.next_state(after, b)
                other = model.next_state(model.next_state(s, b), chosen)
                assert one is not None and other is not None and one == other, (s, chosen, b)
            if chosen.kind == "deliver":  # owners only grow
                before = next(m for m in s.members if m.id == chosen.member)
                got = next(m for m in after.members if m.id == chosen.member)
                assert set(before.active) <= set(got.active)
            else:  # invisible to every state property
                assert [m.active for m in after.members] == [m.active for m in s.members]
                assert after.pending == s.pending and after.triggers == s.triggers
                assert is_stable(after) == is_stable(s) and is_quiescent(after) == is_quiescent(s)
                assert [m.ready for m in after.members] == [m.ready for m in s.members]
    assert {"eager", "cooperative"} <= reduced_somewhere


def test_a_successor_already_old_keeps_the_state_in_full():
    model = model_of("eager", "sticky", partitions=3)
    state = next(s for s in reachable(model) if ample_action(model, s, model.actions(s)) is not None)
    full = model.expand(state)
    kept, reduced = ample_expand(model, state, fingerprint=hash, is_old=lambda h: False)
    assert reduced and len(kept) == 1 < len(full) and kept[0] in full
    kept, reduced = ample_expand(model, state, fingerprint=hash, is_old=lambda h: True)
    assert not reduced and kept == full


def test_nothing_is_reduced_while_a_rebalance_can_follow():
    """A membership event left in the budget keeps every state out of the region (the judge reads
    the lags and roles of every view a later rebalance could see)."""
    model = model_of("eager", "sticky", partitions=3, events=3)
    for s in reachable(model, limit=400):
        if s.events < 3:
            assert not quiet(model, s)


def _verdicts(result):
    return {r.property.name: r.verdict.status.value for r in result.results}


def _check(proto, assignor, bounds, *, por):
    with resolve_for_model(assignor) as resolved:
        return check_model(protocol=parse_protocol(proto), assignor=resolved.assignor, assignor_name=resolved.name,
                           rules=resolved.rules, bounds=bounds, por=por)


PAIRS = [
    ("eager", "sticky"), ("cooperative", "sticky"), ("cooperative", "round-robin"), ("cooperative", "ha"),
    ("cooperative:early_handover=true", "round-robin"), ("learner", "learner"), ("learner:scale_down_timeout=true", "learner"),
    ("learner", "learner-naive"), ("learner:leaving=false", "learner:version=1"),
]


@settings(max_examples=30, deadline=None)
@given(
    pair=st.sampled_from(PAIRS),
    instances=st.integers(2, 3),
    initial=st.integers(1, 2),
    partitions=st.integers(1, 3),
    standbys=st.integers(0, 1),
    stateless=st.integers(0, 1),
    events=st.integers(0, 2),
    start=st.sampled_from(["warm", "cold"]),
)
def test_the_same_verdicts_with_and_without_por(pair, instances, initial, partitions, standbys, stateless, events, start):
    bounds = Bounds(instances=instances, initial=min(initial, instances), subtopologies=1, partitions=partitions,
                    standbys=standbys, stateless=stateless, events=events, start=start)
    full = _check(*pair, bounds, por=False)
    reduced = _check(*pair, bounds, por=True)
    assert reduced.exploration.por and not full.exploration.por
    assert reduced.exploration.states <= full.exploration.states
    assert _verdicts(reduced) == _verdicts(full)
    assert {n: t["kind"] for n, t in reduced.traces.items()} == {n: t["kind"] for n, t in full.traces.items()}
    model = reduced.exploration.model
    for trace in reduced.traces.values():  # counterexamples of the reduced run are runs of the model
        assert replay(model, decode_trace(json.loads(json.dumps(trace))))


def test_a_broken_protocol_is_caught_with_por_on():
    """The early hand-over's two owners (a delivery before the revocation) show with POR on, in
    as many steps as without it."""
    bounds = Bounds(instances=3, initial=2, subtopologies=1, partitions=3, standbys=0, events=1)
    for por in (True, False):
        result = _check("cooperative:early_handover=true", "round-robin", bounds, por=por)
        assert result.status("single-owner").value == "violated"
        assert len(result.traces["single-owner"]["steps"]) - 1 == 3


def test_check_reports_por_and_por_off_explores_every_interleaving(capsys):
    small = ["--protocol", "eager", "--assignor", "sticky", "--partitions", "3"]
    assert main(["check", *small, "--json"]) == 0
    on = json.loads(capsys.readouterr().out)
    assert main(["check", *small, "--json", "--por", "off"]) == 0
    off = json.loads(capsys.readouterr().out)
    assert on["por"]["enabled"] is True and on["por"]["reduced_expansions"] > 0
    assert off["por"] == {"enabled": False, "reduced_expansions": 0}
    assert on["statistics"]["distinct_states"] < off["statistics"]["distinct_states"]
    assert [p["status"] for p in on["properties"]] == [p["status"] for p in off["properties"]]
    assert main(["check", *small]) == 0
    assert "partial-order reduction on (" in capsys.readouterr().out.splitlines()[0]
    assert main(["check", *small, "--por", "maybe"]) == 2
    assert "--por" in capsys.readouterr().err


def test_explore_without_por_is_the_default_of_the_library():
    model = GroupModel(protocol=protocol("eager"), bounds=Bounds(partitions=3), assignor=builtin("sticky").make())
    assert not explore(model).por


def test_a_suite_check_takes_por(tmp_path):
    from rebalproof.errors import InputError
    from rebalproof.pipeline.matrix import run_check
    from rebalproof.pipeline.suite import load_suite

    text = '''[suite]
name = "por"
[[check]]
name = "eager-sticky"
protocol = "eager"
assignor = "sticky"
bounds = { partitions = 3 }
por = "%s"
'''
    path = tmp_path / "suite.toml"
    got = {}
    for por in ("on", "off"):
        path.write_text(text % por)
        spec = load_suite(path).checks[0]
        assert spec.por is (por == "on") and ("por" in spec.to_json()) is (por == "on")
        got[por] = run_check(spec)
    assert got["on"]["por"]["enabled"] and got["on"]["states"] < got["off"]["states"]
    assert [p["status"] for p in got["on"]["properties"]] == [p["status"] for p in got["off"]["properties"]]
    path.write_text(text % "maybe")
    try:
        load_suite(path)
    except InputError as error:
        assert "por must be" in str(error)
    else:
        raise AssertionError("a bad por value was accepted")


def test_por_switches_itself_off_under_a_depth_or_state_bound(capsys):
    """A reduced run reaches some states deeper or later: under --depth or --max-states a violation
    within the bound could fall outside it, so POR is off there and the report says why."""
    small = ["--protocol", "eager", "--assignor", "sticky", "--partitions", "3"]
    for bound in (["--depth", "12"], ["--max-states", "500"]):
        main(["check", *small, *bound, "--json"])
        report = json.loads(capsys.readouterr().out)
        assert report["por"]["enabled"] is False and "bound" in report["por"]["switched_off"]
        main(["check", *small, *bound])
        assert "partial-order reduction off (a depth or state bound is set" in capsys.readouterr().out.splitlines()[0]
    main(["check", *small, "--por", "off", "--depth", "12", "--json"])
    assert "switched_off" not in json.loads(capsys.readouterr().out)["por"]
