"""The group model: init, guards, member-level rebalance steps, protocols, purity and pickling."""

from __future__ import annotations

import pickle

import pytest

from rebalproof.errors import InputError
from rebalproof.model.group_bounds import Bounds, load_scenario
from rebalproof.model.group_model import GroupModel
from rebalproof.model.group_protocol import parse_protocol, protocol
from rebalproof.model.group_state import ACTION_KINDS, BEHIND, CAUGHT_UP, Action, is_stable, member_of
from rebalproof.model.toy_assignors import NaiveLearner, RoundRobin

SMALL = dict(instances=3, initial=2, subtopologies=1, partitions=3, standbys=0, events=1)


def model(proto="cooperative", assignor=None, **bounds):
    return GroupModel(protocol=parse_protocol(proto), bounds=Bounds(**{**SMALL, **bounds}), assignor=assignor or RoundRobin())


def act(m, s, kind, **kw):
    """Take the one enabled action of ``kind`` matching ``kw``."""
    options = [a for a in m.actions(s) if a.kind == kind and all(getattr(a, k) == v for k, v in kw.items())]
    assert len(options) == 1, (kind, kw, m.actions(s))
    nxt = m.next_state(s, options[0])
    assert nxt is not None
    return nxt


def test_cold_start_has_a_first_rebalance_due():
    m = model(start="cold")
    (s,) = m.init_states()
    assert [x.id for x in s.members] == ["I1", "I2"] and s.leader == "I1" and s.memory is None
    assert s.triggers == ("start",) and not is_stable(s)
    assert [a.kind for a in m.actions(s)][0] == "rebalance"


def test_warm_start_is_settled_and_caught_up():
    m = model()
    (s,) = m.init_states()
    assert is_stable(s) and not s.probe and s.memory == ("I1", "I2")
    assert sorted(t for x in s.members for t in x.active) == ["0_0", "0_1", "0_2"]
    assert all(c == CAUGHT_UP for x in s.members for _, c in x.lags)


def test_actions_are_in_the_stable_kind_order_and_all_enabled():
    m = model(start="cold")
    s = m.init_states()[0]
    for _ in range(4):
        kinds = [a.kind for a in m.actions(s)]
        assert kinds == sorted(kinds, key=ACTION_KINDS.index)
        for a in m.actions(s):
            assert m.next_state(s, a) is not None
        s = m.expand(s)[0][1]


def test_disabled_actions_give_none():
    m = model()
    s = m.init_states()[0]
    assert m.next_state(s, Action("deliver", member="I1")) is None  # nothing pending
    assert m.next_state(s, Action("rebalance")) is None  # none needed
    assert m.next_state(s, Action("probe")) is None
    assert m.next_state(s, Action("leave", member="I1")) is None  # the leader crashes, it does not leave
    assert m.next_state(s, Action("join", member="I9")) is None  # joins take the next id
    assert m.next_state(s, Action("no-such-kind")) is None


def test_expand_is_pure_and_deterministic():
    m = model(start="cold")
    s = m.init_states()[0]
    before = pickle.dumps(s)
    assert m.expand(s) == m.expand(s)
    assert pickle.dumps(s) == before


def test_delivery_is_per_member_and_cooperative_hands_over_after_revocation():
    m = model("cooperative")
    s = act(m, m.init_states()[0], "join")
    s = act(m, s, "rebalance")
    # round-robin moves 0_2 from I1 to I3, but I3 is not given it while I1 owns it
    assert dict((e[0], e[1]) for e in s.pending) == {"I1": ("0_0",), "I2": ("0_1",), "I3": ()}
    s = act(m, s, "deliver", member="I3")
    assert member_of(s, "I3").active == () and member_of(s, "I1").active == ("0_0", "0_2")
    s = act(m, s, "deliver", member="I1")  # I1 revokes 0_2 and rejoins at once
    assert member_of(s, "I1").active == ("0_0",) and s.triggers == ("revoked",)
    s = act(m, s, "deliver", member="I2")
    s = act(m, s, "rebalance")  # the follow-up hands 0_2 over
    s = act(m, s, "deliver", member="I3")
    assert member_of(s, "I3").active == ("0_2",) and member_of(s, "I3").lag("0_2") == BEHIND


def test_early_handover_gives_two_owners():
    m = model("cooperative:early_handover=true")
    s = act(m, m.init_states()[0], "join")
    s = act(m, s, "rebalance")
    s = act(m, s, "deliver", member="I3")
    assert member_of(s, "I1").active == ("0_0", "0_2") and member_of(s, "I3").active == ("0_2",)


def test_eager_revokes_everything_at_the_join_but_reports_it():
    m = model("eager")
    s = act(m, m.init_states()[0], "join")
    view = m.view_of(s)
    assert view.member("I1").active == ("0_0", "0_2")  # reported (Kafka's prevTasks)
    s = act(m, s, "rebalance")
    assert all(x.active == () for x in s.members)


def test_learner_revokes_being_learned_tasks_at_each_join():
    m = GroupModel(protocol=protocol("learner"), bounds=Bounds(instances=3, initial=2, subtopologies=1, partitions=2, standbys=0, events=1),
                   assignor=NaiveLearner(learners_to="any"))
    s = act(m, m.init_states()[0], "join")
    s = act(m, s, "rebalance")
    for member in ("I1", "I2", "I3"):
        s = act(m, s, "deliver", member=member)
    assert member_of(s, "I3").warmup == ("0_0",)
    s = act(m, s, "restore", member="I3", task="0_0")
    assert member_of(s, "I3").ready
    s = act(m, s, "rejoin", member="I3")
    view = m.view_of(s)
    assert view.member("I1").active == () and view.member("I1").lag("0_0") == 0  # being learned: revoked, state reported
    s = act(m, s, "rebalance")
    assert member_of(s, "I1").active == ()


def test_leaving_member_shuts_down_when_it_has_no_active_left():
    m = GroupModel(protocol=protocol("learner"), bounds=Bounds(instances=2, initial=2, subtopologies=1, partitions=1, standbys=0, events=1),
                   assignor=NaiveLearner(learners_to="none"))
    s = m.init_states()[0]
    owner = next(x.id for x in s.members if x.active)
    other = next(x.id for x in s.members if x.id != owner)
    s = act(m, s, "mark-leaving", member=other)
    s = act(m, s, "rebalance")
    s = act(m, s, "deliver", member=owner)
    s = act(m, s, "deliver", member=other)
    assert member_of(s, other) is None and "left" in s.triggers


def test_the_last_member_not_leaving_cannot_leave():
    m = GroupModel(protocol=protocol("learner"), bounds=Bounds(instances=2, initial=2, subtopologies=1, partitions=1, standbys=0, events=2),
                   assignor=NaiveLearner(learners_to="none"))
    s = act(m, m.init_states()[0], "mark-leaving", member="I2")
    kinds = [(a.kind, a.member) for a in m.actions(s)]
    assert ("crash", "I1") not in kinds and ("mark-leaving", "I1") not in kinds


def test_leader_crash_loses_memory_and_the_next_rebalance_elects_any_member():
    m = model(initial=3, instances=3)
    s = act(m, m.init_states()[0], "crash")
    assert s.leader is None and s.memory is None
    leaders = sorted(a.leader for a in m.actions(s) if a.kind == "rebalance")
    assert leaders == ["I2", "I3"]
    s = act(m, s, "rebalance", leader="I3")
    assert s.leader == "I3" and s.memory == ("I2", "I3")


def test_aging_only_in_a_stable_group():
    m = GroupModel(protocol=protocol("cooperative"), bounds=Bounds(**SMALL), assignor=RoundRobin())
    s = act(m, m.init_states()[0], "join")
    s = act(m, s, "rebalance")
    for member in ("I1", "I2", "I3"):
        s = act(m, s, "deliver", member=member)
    assert not any(a.kind in ("age", "cleanup") for a in m.actions(s))  # the follow-up is due
    s = act(m, s, "rebalance")
    for member in ("I1", "I2", "I3"):
        s = act(m, s, "deliver", member=member)
    assert [a for a in m.actions(s) if a.kind == "age"] == [Action("age", member="I1", task="0_2")]
    s = act(m, s, "age", member="I1", task="0_2")
    s = act(m, s, "cleanup", member="I1", task="0_2")
    assert member_of(s, "I1").lag("0_2") is None


def test_model_and_states_pickle():
    m = model()
    s = m.init_states()[0]
    m2 = pickle.loads(pickle.dumps(m))
    assert pickle.loads(pickle.dumps(s)) == s
    assert [a for a, _ in m2.expand(s)] == [a for a, _ in m.expand(s)]


def test_bad_protocols_and_bounds_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="unknown protocol"):
        parse_protocol("stop-the-world")
    with pytest.raises(InputError, match="has no option"):
        parse_protocol("eager:early_handover=true")
    with pytest.raises(InputError, match="true or key=false"):
        parse_protocol("cooperative:early_handover=maybe")
    with pytest.raises(InputError, match="initial"):
        Bounds(instances=1, initial=2)
    bad = tmp_path / "s.toml"
    bad.write_text("instances = 3\ncode = 'rm -rf'\n")
    with pytest.raises(InputError, match="unknown key 'code'"):
        load_scenario(bad)
