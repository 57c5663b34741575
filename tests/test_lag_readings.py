"""Boundary lags (model/lag_readings.py): the readings, the model's rebalance actions, traces.

The model keeps lag classes; with ``Bounds.boundary_lags`` a rebalance may also show the leader
caught-up copies at exactly ``acceptable_recovery_lag``. An answer to such a reading that the
canonical view also got adds no step: that rests on every per-rebalance property reading a
caught-up lag only through the floor, which the first tests assert on generated views.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from broken_assignors import BROKEN
from rebalproof.model.assignors import builtin
from rebalproof.model.codec import encode_assignment, encode_input
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_model import GroupModel
from rebalproof.model.group_protocol import parse_protocol
from rebalproof.model.group_state import CAUGHT_UP, BEHIND, Action
from rebalproof.model.lag_readings import BEHIND_READINGS, READINGS, behind_offsets, changes_anything, member_lags, reported_lags, spreads_behind_ranks
from rebalproof.model.view import Member
from rebalproof.properties import RULE_SETS, check_assignment
from rebalproof.strategies import assignments, rebalance_inputs
from rebalproof.traces.format import decode_trace

INPUTS = rebalance_inputs(max_members=5, max_subtopologies=3, max_partitions=3)


def _verdicts(view, out):
    return {
        (rules, v.property): (v.status, v.tasks, v.members, v.measure)
        for rules in RULE_SETS
        for v in check_assignment(view, out, rules=rules)
    }


def _reread(view, data):
    """``view`` with every caught-up lag (at most the limit) drawn again within the limit."""
    limit = view.config.acceptable_recovery_lag
    members = []
    for m in view.members:
        lags = {}
        for t, lag in m.lags:
            if lag <= limit:
                lag = data.draw(st.sampled_from((0, limit, limit // 2)) | st.integers(0, limit), label=f"lag of {t} on {m.id}")
            lags[t] = lag
        members.append(replace(m, lags=tuple(sorted(lags.items()))))
    return view.replace(members=tuple(members))


def assert_floor_only(view, out, data):
    again = _reread(view, data)
    note(f"input: {json.dumps(encode_input(view))}\nreread: {json.dumps(encode_input(again))}")
    note(f"output: {json.dumps(encode_assignment(out))}")
    assert _verdicts(again, out) == _verdicts(view, out)


@pytest.mark.parametrize("name", ["sticky", "eager", "learner", "ha"])
@settings(max_examples=100)
@given(view=INPUTS, data=st.data())
def test_a_caught_up_lag_reread_within_the_limit_changes_no_verdict_of_builtin_answers(name, view, data):
    assert_floor_only(view, builtin(name).make()(view), data)


@pytest.mark.parametrize("name", sorted(BROKEN))
@settings(max_examples=20)
@given(view=INPUTS, data=st.data())
def test_a_caught_up_lag_reread_within_the_limit_changes_no_verdict_of_broken_answers(name, view, data):
    out = BROKEN[name][0](view)
    if out is not None:
        assert_floor_only(view, out, data)


@settings(max_examples=300)
@given(INPUTS.flatmap(lambda v: assignments(v).map(lambda a: (v, a))), st.data())
def test_a_caught_up_lag_reread_within_the_limit_changes_no_verdict_of_any_answer(pair, data):
    view, out = pair
    assert_floor_only(view, out, data)


# -- the readings -------------------------------------------------------------------------------
LAGS = (("0_0", CAUGHT_UP), ("0_1", CAUGHT_UP), ("1_0", BEHIND), ("1_1", CAUGHT_UP))


def test_the_canonical_reading_reports_0_and_limit_plus_1():
    assert reported_lags(None, LAGS, ("0_0",), ("0_1",), (), 100) == (("0_0", 0), ("0_1", 0), ("1_0", 101), ("1_1", 0))


def test_owners_at_limit_puts_only_the_owners_caught_up_copy_at_the_limit():
    assert reported_lags("owners-at-limit", LAGS, ("0_0", "1_0"), ("0_1",), (), 100) == (
        ("0_0", 100), ("0_1", 0), ("1_0", 101), ("1_1", 0))


def test_hosts_at_limit_puts_every_hosted_caught_up_copy_at_the_limit():
    assert reported_lags("hosts-at-limit", LAGS, ("0_0",), ("0_1",), ("1_0",), 100) == (
        ("0_0", 100), ("0_1", 100), ("1_0", 101), ("1_1", 0))


def test_a_reading_changes_nothing_with_a_limit_of_0_or_nothing_caught_up():
    member = ("I1", False, ("0_0",), (), (), (("0_0", CAUGHT_UP),))
    assert changes_anything("owners-at-limit", (member,), 100)
    assert not changes_anything("owners-at-limit", (member,), 0)
    behind = ("I1", False, ("0_0",), (), (), (("0_0", BEHIND),))
    assert not changes_anything("owners-at-limit", (behind,), 100)
    unhosted = ("I1", False, (), (), (), (("0_0", CAUGHT_UP),))
    assert not changes_anything("hosts-at-limit", (unhosted,), 100)


# -- behind copies spread apart (red team 8) -------------------------------------------------------
#: a view key's member parts (id, leaving, active, standby, warmup, lags): I1 holds 3 copies and
#: is behind on 1_0; I2 holds 1 and is behind on 1_0 too; I3 holds 2, no state of 1_0
_BEHIND_KEY = (
    ("I1", False, ("0_0", "0_1"), ("1_1",), (), (("0_0", CAUGHT_UP), ("0_1", CAUGHT_UP), ("1_0", BEHIND), ("1_1", CAUGHT_UP))),
    ("I2", False, ("1_1",), (), (), (("1_0", BEHIND), ("1_1", CAUGHT_UP))),
    ("I3", False, ("1_0",), ("0_0",), (), (("0_0", CAUGHT_UP), ("1_0", CAUGHT_UP))),
)


def test_behind_readings_spread_behind_copies_by_load_both_ways():
    assert behind_offsets(None, _BEHIND_KEY) == behind_offsets("hosts-at-limit", _BEHIND_KEY) == (0, 0, 0)
    assert behind_offsets("behind-fewer-closer", _BEHIND_KEY) == (3, 1, 2)
    assert behind_offsets("behind-more-closer", _BEHIND_KEY) == (0, 2, 1)
    fewer = dict(zip(("I1", "I2", "I3"), member_lags("behind-fewer-closer", _BEHIND_KEY, 100)))
    more = dict(zip(("I1", "I2", "I3"), member_lags("behind-more-closer", _BEHIND_KEY, 100)))
    assert dict(fewer["I1"])["1_0"] == 104 and dict(fewer["I2"])["1_0"] == 102  # I2, with fewer copies, is closer
    assert dict(more["I1"])["1_0"] == 101 and dict(more["I2"])["1_0"] == 103  # I1, with more, is closer
    assert dict(fewer["I1"])["0_0"] == dict(more["I1"])["0_0"] == 0  # caught-up copies as in the canonical reading
    assert all(spreads_behind_ranks(r, _BEHIND_KEY) for r in BEHIND_READINGS)


def test_behind_readings_are_offered_only_where_they_tell_two_behind_copies_apart():
    one_behind = (_BEHIND_KEY[0], _BEHIND_KEY[2])  # only I1 is behind on 1_0
    assert not any(spreads_behind_ranks(r, one_behind) for r in BEHIND_READINGS)
    same_load = (_BEHIND_KEY[1], ("I4", False, ("0_1",), (), (), (("1_0", BEHIND),)))  # both behind, one copy each
    assert not any(spreads_behind_ranks(r, same_load) for r in BEHIND_READINGS)


def test_behind_readings_follow_a_renaming_of_the_members():
    """The spread is read off the members' loads, which names do not change: the renamed key's
    lags are the key's lags renamed (so the readings keep a reduced run sound)."""
    renamed = tuple((f"J{i}", *m[1:]) for i, m in reversed(list(enumerate(_BEHIND_KEY))))
    for r in BEHIND_READINGS:
        by_name = dict(zip((m[0] for m in _BEHIND_KEY), member_lags(r, _BEHIND_KEY, 100)))
        by_new = dict(zip((m[0] for m in renamed), member_lags(r, renamed, 100)))
        assert all(by_name[f"I{i + 1}"] == by_new[f"J{i}"] for i in range(3))


# -- the model ----------------------------------------------------------------------------------
def _model(assignor, **bounds):
    return GroupModel(protocol=parse_protocol("cooperative"), bounds=Bounds(**bounds), assignor=assignor, assignor_name="a")


def _joined_state(model):
    """The state after I3 joins the settled warm group: a rebalance is due."""
    state = model.init_states()[0]
    return model.next_state(state, Action("join", member="I3"))


def _unfloored(view):
    """The built-in ha deciding on raw lags: acceptable_recovery_lag read as 0."""
    return builtin("ha").make()(view.replace(config=replace(view.config, acceptable_recovery_lag=0)))


def test_an_assignor_that_reads_lags_through_the_floor_gets_no_boundary_step():
    from examples.ha_assignor import assign as example
    from rebalproof.model.assignors.spec import resolve

    with resolve("py:examples.ha_assignor:assign") as resolved:
        model = _model(resolved, boundary_lags=True)
        state = _joined_state(model)
        rebalances = [a for a in model.actions(state) if a.kind == "rebalance"]
        assert rebalances == [Action("rebalance")]
        # the readings were asked all the same, and answered as the canonical view was (the
        # behind readings are not offered: nobody is behind on a task another is behind on too)
        for reading in READINGS:
            if reading in BEHIND_READINGS:
                assert model.rebalance_step(state, Action("rebalance", lags=reading)) is None
                continue
            step = model.rebalance_step(state, Action("rebalance", lags=reading))
            assert step is not None and step.assignment == model.rebalance_step(state, Action("rebalance")).assignment
            assert any(lag == 10000 for m in step.view.members for _, lag in m.lags)
    assert example  # imported to make sure the example is the one resolved


def test_an_assignor_that_ranks_raw_lags_gets_a_boundary_step_showing_the_limit():
    model = _model(_unfloored, boundary_lags=True)
    state = _joined_state(model)
    rebalances = [a for a in model.actions(state) if a.kind == "rebalance"]
    assert rebalances[0] == Action("rebalance") and len(rebalances) > 1
    for action in rebalances[1:]:
        assert action.lags in READINGS
        step = model.rebalance_step(state, action)
        canonical = model.rebalance_step(state, Action("rebalance"))
        assert step.assignment != canonical.assignment
        assert {lag for m in step.view.members for _, lag in m.lags} == {0, 10000}
        assert model.next_state(state, action) is not None


def test_without_the_bound_a_reading_is_not_enabled():
    model = _model(_unfloored)
    state = _joined_state(model)
    assert all(a.lags is None for a in model.actions(state))
    assert model.next_state(state, Action("rebalance", lags="owners-at-limit")) is None


def test_boundary_lags_change_no_state_count_for_an_assignor_reading_lags_through_the_floor():
    from rebalproof.model.assignors.spec import resolve
    from rebalproof.properties.run_check import check_model

    counts = []
    calls = []
    for on in (False, True):
        with resolve("py:examples.ha_assignor:assign") as resolved:
            result = check_model(protocol=parse_protocol("cooperative"), assignor=resolved, assignor_name="example",
                                 rules="ha", bounds=Bounds(boundary_lags=on, events=1), symmetry=False)
        counts.append(result.exploration.stats.states)
        calls.append(result.exploration.model._chooser.calls)
        assert not result.violated
    assert counts[0] == counts[1]
    assert calls[1] > calls[0]


_TRACES: list = []
LAG_STRICT = "py:tests.mutants:lag_strict"  # caught up read as lag < acceptable_recovery_lag


def _trace_with_a_reading() -> dict:
    """lag_strict's counterexample at --events 1 --depth 6 (5 steps, both readings shown); made once."""
    from rebalproof.model.assignors.spec import resolve
    from rebalproof.properties.run_check import check_model

    if not _TRACES:
        with resolve(LAG_STRICT) as resolved:
            result = check_model(protocol=parse_protocol("cooperative"), assignor=resolved, assignor_name=LAG_STRICT,
                                 rules="ha", bounds=Bounds(boundary_lags=True, events=1, depth=6), symmetry=False)
        assert "caught-up-active" in {r.property.name for r in result.violated}
        _TRACES.append(result.traces["caught-up-active"])
    return _TRACES[0]


def test_a_trace_with_a_reading_round_trips_and_replays():
    trace = decode_trace(json.loads(json.dumps(_trace_with_a_reading())))
    assert trace.header["bounds"]["boundary_lags"] is True
    readings = [s.action.lags for s in trace.steps[1:] if s.action.kind == "rebalance"]
    assert any(readings)
    from rebalproof.model.assignors.spec import resolve

    assert {a.lags for a in trace.actions if a.kind == "rebalance"} == set(READINGS) - set(BEHIND_READINGS)
    bounds = dict(trace.header["bounds"])
    bounds["capacities"] = tuple(bounds.get("capacities", (1,)))
    with resolve(LAG_STRICT) as resolved:
        model = _model(resolved, **bounds)  # a fresh model from the trace's own bounds
        state = trace.steps[0].state
        for step in trace.steps[1:]:
            if step.action.kind == "rebalance":
                computed = model.rebalance_step(state, step.action)
                assert encode_input(computed.view) == step.rebalance["input"]
            state = model.next_state(state, step.action)
            assert state == step.state


def test_a_reading_is_validated_when_a_trace_is_read():
    from rebalproof.errors import InputError

    raw = json.loads(json.dumps(_trace_with_a_reading()))
    at = next(i for i, s in enumerate(raw["steps"]) if s["action"].get("lags"))
    raw["steps"][at]["action"]["lags"] = "somewhere"
    with pytest.raises(InputError, match=r'action.lags: must be one of "owners-at-limit", "hosts-at-limit", "behind-fewer-closer", "behind-more-closer", got "somewhere"'):
        decode_trace(raw)
    raw["steps"][at]["action"]["lags"] = "owners-at-limit"
    raw["steps"][1]["action"]["lags"] = "owners-at-limit"  # the join
    with pytest.raises(InputError, match="on a join"):
        decode_trace(raw)


def test_show_says_which_copies_a_reading_reported_at_the_limit():
    from rebalproof.traces.render_html import render_html
    from rebalproof.traces.render_text import render_text

    trace = decode_trace(json.loads(json.dumps(_trace_with_a_reading())))
    text = render_text(trace)
    assert "the leader's view reports these caught-up copies at acceptable_recovery_lag (10000): I" in text
    assert "every other caught-up copy at 0 (owners-at-limit)" in text or "every other caught-up copy at 0 (hosts-at-limit)" in text
    assert "The leader&#x27;s view reports these caught-up copies" in render_html(trace) or \
        "The leader's view reports these caught-up copies" in render_html(trace)


def test_an_assignor_failing_on_a_behind_probe_is_a_finding_with_a_trace_to_that_view(tmp_path):
    """A crash on a view that spreads behind copies apart (judged, not explored) is reported as
    any failed rebalance is (``assignor-answers``, exit 1), never taken for a failure of the warm
    start, and its trace ends on that view and replays exactly."""
    from rebalproof.cli.main import main

    trace_dir = tmp_path / "traces"
    spec = "py:tests.assignors.behind_spread_crash:assign"
    assert main(["check", "--quiet", "--standbys", "0", "--assignor", spec, "--trace-dir", str(trace_dir)]) == 1
    trace = json.loads(next(trace_dir.glob("*assignor-answers.json")).read_text())
    last = trace["steps"][-1]
    assert last["action"]["lags"] in BEHIND_READINGS and "cannot read these lags" in last["error"]
    assert main(["replay", str(next(trace_dir.glob("*assignor-answers.json")))]) == 0
