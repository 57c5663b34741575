"""The explorer's fast paths give the slow paths' values (#11 item 1).

- :class:`~rebalproof.model.group_fingerprint.Fingerprinter` memoises members' texts: its
  fingerprints are :func:`~rebalproof.model.group_fingerprint.fingerprint`'s, before and
  after pickling (the Spark engine ships it), on every state of a real exploration; reduced by
  symmetry, its canonical texts and fingerprints are
  :func:`~rebalproof.model.group_fingerprint.canonical_encode`'s and
  :func:`~rebalproof.model.group_fingerprint.fingerprint_symmetric`'s.
- the per-rebalance judge judges each shape of (view, answer) once
  (:func:`~rebalproof.properties.run_rebalance.shape_of`): every view's verdicts, every report
  and every trace are the ones judging each view gives, violations included;
- :func:`~rebalproof.model.assignors.ha_flow.quota_box` works in integers with a memo: its
  boxes are the ones the water level gives in exact fractions (the oracle below).
"""

from __future__ import annotations

import math
import pickle
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rebalproof.model.assignors import builtin
from rebalproof.model.assignors.ha_flow import quota_box
from rebalproof.model.explorer import explore
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_fingerprint import Fingerprinter, canonical_encode, encode, fingerprint, fingerprint_symmetric
from rebalproof.model.group_model import GroupModel
from rebalproof.model.group_protocol import protocol
from rebalproof.model.toy_assignors import RoundRobin

from test_assignor_ha import views as ha_views


def test_memoised_fingerprints_are_the_plain_ones_on_every_explored_state():
    model = GroupModel(protocol=protocol("cooperative"), bounds=Bounds(events=1), assignor=builtin("ha").make(), assignor_name="ha")
    exp = explore(model)
    assert exp.complete and exp.states > 150
    fresh = pickle.loads(pickle.dumps(exp.fingerprinter))
    assert fresh._members == {}
    for idx in range(exp.states):
        state = exp.state_at(idx)
        assert exp.fingerprinter.encode(state) == encode(state)
        assert exp.fingerprints[idx] == fingerprint(state) == fresh(state)



@pytest.mark.parametrize("proto, assignor, bounds", [
    ("cooperative", "ha", Bounds(events=1)),
    ("learner", "learner", Bounds(events=1, partitions=3)),  # 36 renamings, pending assignments
    ("cooperative", "ha", Bounds(events=1, capacities=(2, 1, 1))),  # capacity in each record
])
def test_symmetric_fingerprints_are_the_reference_ones_on_every_explored_state(proto, assignor, bounds):
    """The fast canonical text (each member's records under every renaming built once, states
    remembered) is the reference one, on every state and successor of a real exploration, with
    the caches cleared mid-run and after pickling."""
    from rebalproof.model import group_fingerprint

    model = GroupModel(protocol=protocol(proto), bounds=bounds, assignor=builtin(assignor).make(), assignor_name=assignor)
    exp = explore(model, symmetry=True)
    assert exp.complete and exp.states > 100
    fast = exp.fingerprinter
    assert fast.symmetry and fast._states
    fresh = pickle.loads(pickle.dumps(fast))
    assert fresh._pieces == {} and fresh._states == {}
    perms, classes = fast.perms, fast.classes
    for idx in range(exp.states):
        state = exp.state_at(idx)
        if idx % 97 == 0:  # a full cache starts afresh
            fast._pieces.clear()
            fast._states.clear()
        reference = fingerprint_symmetric(state, perms, classes)
        assert exp.fingerprints[idx] == reference == fast(state) == fresh(state)
        for _, nxt in model.expand(state):
            assert fast.canonical(nxt).encode() == canonical_encode(nxt, perms, classes)
            assert fast(nxt) == fingerprint_symmetric(nxt, perms, classes)
    assert group_fingerprint._STATE_CACHE_LIMIT >= 1024

def _fraction_box(total, caps, start):
    """The water level in :class:`~fractions.Fraction` (the implementation before integers)."""
    members = sorted(caps)

    def room(level):
        return sum(max(0, math.floor(level * caps[m]) - start.get(m, 0)) for m in members)

    level = Fraction(0)
    while room(level) < total:
        level = min(Fraction(math.floor(level * caps[m]) + 1, caps[m]) for m in members)
    return {
        m: (max(0, math.ceil(level * caps[m]) - 1 - start.get(m, 0)), max(0, math.floor(level * caps[m]) - start.get(m, 0)))
        for m in members
    }


@settings(max_examples=300)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 5)), min_size=1, max_size=5), st.integers(0, 12), st.booleans())
def test_integer_quota_box_is_the_fraction_one(members, total, with_start):
    caps = {f"I{i}": c for i, (c, _) in enumerate(members)}
    start = {f"I{i}": s for i, (_, s) in enumerate(members)} if with_start else {}
    want = _fraction_box(total, caps, start)
    assert quota_box(total, caps, start=start or None) == want
    assert quota_box(total, caps, start=start or None) == want  # the memo's answer too


def _judged(monkeypatch, by_shape: bool, **check):
    """A check with the judge memoising by shape or not: (report, per-view masks, catalogue calls)."""
    from functools import partial

    from rebalproof.properties import run as run_module
    from rebalproof.properties.run_check import check_model
    from rebalproof.properties.run_rebalance import RebalanceJudge

    judges = []

    def make(*args, **kwargs):
        judge = RebalanceJudge(*args, **kwargs, by_shape=by_shape)
        judges.append(judge)
        return judge

    monkeypatch.setattr(run_module, "RebalanceJudge", make)
    result = check_model(**check)
    report = [(r.property.name, r.verdict.status, r.verdict.message, r.verdict.measure) for r in result.results]
    return report, result.traces, judges[-1].views, judges[-1].judged


@pytest.mark.parametrize(
    "label, assignor, rules, bounds",
    [
        ("ha", lambda: builtin("ha").make(), "ha", Bounds()),
        ("ha, mixed capacities", lambda: builtin("ha").make(), "ha", Bounds(events=1, capacities=(2, 1))),
        ("round-robin judged by the ha rules (violations)", RoundRobin, "ha", Bounds(events=1)),
    ],
)
def test_judging_each_shape_once_gives_the_per_view_verdicts_of_judging_every_view(monkeypatch, label, assignor, rules, bounds):
    check = dict(protocol=protocol("cooperative"), bounds=bounds, rules=rules, assignor_name=label)
    slow = _judged(monkeypatch, False, assignor=assignor(), **check)
    fast = _judged(monkeypatch, True, assignor=assignor(), **check)
    assert fast[:3] == slow[:3], label
    assert fast[3] <= slow[3]
    if label == "ha":  # views I1+I3 and I2+I3 of one shape: judged once
        assert fast[3] < slow[3], f"{label}: no shape was shared ({fast[3]} judged of {slow[3]})"


@settings(max_examples=100)
@given(st.lists(st.integers(0, 2**64 - 1), unique=True, max_size=60), st.integers(1, 8))
def test_visited_set_is_a_dict_whatever_the_merges(fps, young_limit):
    from rebalproof.model.visited import Visited

    seen, plain = Visited(young_limit=young_limit), {}
    for idx, fp in enumerate(fps):
        assert seen.get(fp) is None
        seen.add(fp, idx)
        plain[fp] = idx
        assert len(seen) == len(plain)
    for fp, idx in plain.items():
        assert seen.get(fp) == idx
    assert seen.get(2**64 - 1) == plain.get(2**64 - 1)


def test_compact_states_are_equal_and_share_equal_members():
    from rebalproof.model.group_state import GroupState, MemberState

    model = GroupModel(protocol=protocol("cooperative"), bounds=Bounds(events=1), assignor=builtin("ha").make(), assignor_name="ha")
    a = GroupState(members=(MemberState(id="I1", active=("0_0",)), MemberState(id="I2")), leader="I1", memory=None, spawned=2, events=0)
    b = GroupState(members=(MemberState(id="I1", active=("0_0",)), MemberState(id="I3")), leader="I1", memory=None, spawned=3, events=1)
    ca, cb = model.compact(a), model.compact(b)
    assert (ca, cb) == (a, b) and type(ca) is GroupState
    assert cb.members[0] is ca.members[0]  # equal members built apart: one object kept


def test_a_pickled_model_starts_with_empty_caches_and_expands_alike():
    model = GroupModel(protocol=protocol("cooperative"), bounds=Bounds(events=1), assignor=builtin("ha").make(), assignor_name="ha")
    state = model.init_states()[0]
    want = model.expand(state)
    model.compact(state)
    fresh = pickle.loads(pickle.dumps(model))  # as the Spark engine ships it
    assert fresh._last.state is None and len(fresh._interned) == 0 and fresh._chooser._memo == {}
    assert fresh.expand(state) == want
    assert fresh.compact(state) == state


class _Unpacked:
    """A model as it is, but without :meth:`GroupModel.packer`: the explorer queues its states as objects."""

    def __init__(self, model):
        self._model = model

    def __getattr__(self, name):
        if name == "packer":
            raise AttributeError(name)
        return getattr(self._model, name)


GRAPH = ("parent", "via", "depth", "edge_src", "edge_dst", "edge_act", "first_edge", "fingerprints", "actions", "init")


@pytest.mark.parametrize("por", [False, True])
@pytest.mark.parametrize(
    "proto, assignor, bounds",
    [
        ("cooperative", "ha", Bounds(events=2)),
        (protocol("learner", scale_down_timeout=True), "learner", Bounds(events=2)),
        ("cooperative", "round-robin", Bounds(instances=4, initial=3, partitions=3, events=1)),
    ],
)
def test_packed_queue_explores_what_the_object_queue_explores(por, proto, assignor, bounds):
    """States queued as packed records (model/frontier.py) give the very graph states queued as
    objects give: same indices, parents, edges, actions, fingerprints, stop reason."""

    a = RoundRobin() if assignor == "round-robin" else builtin(assignor).make()
    # one model for every run: its memo answers each view once (the queue is what differs)
    model = GroupModel(protocol=protocol(proto) if isinstance(proto, str) else proto, bounds=bounds, assignor=a, assignor_name=assignor)

    from rebalproof.model.explorer import Limits

    for limits in (Limits(), Limits(max_states=700), Limits(max_depth=6)):
        packed, plain = explore(model, por=por, limits=limits), explore(_Unpacked(model), por=por, limits=limits)
        for name in GRAPH:
            assert list(getattr(packed, name)) == list(getattr(plain, name)), name
        assert (packed.complete, packed.bound, packed.unexpanded) == (plain.complete, plain.bound, plain.unexpanded)
        assert packed.states > 100


def test_packed_records_unpack_to_equal_states_sharing_their_parts():
    from rebalproof.model.frontier import PackedFrontier

    model = GroupModel(protocol=protocol("cooperative"), bounds=Bounds(events=2), assignor=builtin("ha").make(), assignor_name="ha")
    exp = explore(model)
    queue = PackedFrontier(model.packer())
    states = [exp.state_at(i) for i in range(0, exp.states, 7)]
    for i, s in enumerate(states):
        queue.push(i, s)
    assert len(queue) == len(states) and queue.peek() == 0
    back = [queue.pop() for _ in states]
    assert back == list(enumerate(states)) and len(queue) == 0
    by_value = {}
    for _, s in back:
        for m in s.members:
            assert by_value.setdefault(m, m) is m  # one object per distinct member


class _ManyActions:
    """A toy model with 600 states in a line, each step a distinct action (``step i``): action
    ids outgrow one byte, and the explorer widens its arrays."""

    task_ids = ()

    def init_states(self):
        return (0,)

    def expand(self, state):
        return [(("step", state), state + 1)] if state < 600 else []

    def next_state(self, state, action):
        return state + 1 if action == ("step", state) else None


def test_action_ids_past_one_byte_widen_the_edge_array():
    from rebalproof.model import group_fingerprint

    class Ints(group_fingerprint.Fingerprinter):
        def __call__(self, state):
            return state

    import rebalproof.model.explorer as explorer

    original = explorer.Fingerprinter
    explorer.Fingerprinter = Ints
    try:
        exp = explore(_ManyActions())
    finally:
        explorer.Fingerprinter = original
    assert exp.states == 601 and len(exp.actions) == 600 and exp.edge_act.typecode == "H"
    assert list(exp.edge_act) == list(range(600)) and list(exp.edge_src) == list(range(600))
    assert [exp.actions[exp.via[i]] for i in range(1, 601)] == [("step", i) for i in range(600)]


def test_equal_answers_to_different_views_are_kept_once():
    model = GroupModel(protocol=protocol("cooperative"), bounds=Bounds(instances=4, initial=3, partitions=3, events=1),
                       assignor=RoundRobin(), assignor_name="round-robin")
    explore(model)
    memo = model._chooser._memo
    kept = {id(a) for a in memo.values()}
    assert len(memo) > 2 * len(kept)  # round-robin answers many views alike
    assert len(kept) == len(set(memo.values()))


@pytest.mark.parametrize(
    "proto, bounds",
    [
        ("cooperative", Bounds(events=2)),
        ("cooperative", Bounds(instances=4, initial=3, partitions=1, events=2, capacities=(2, 1, 1, 2))),  # 678 views, 1 s (2x2 tasks: 5 min)
        ("cooperative", Bounds(instances=4, initial=2, subtopologies=1, partitions=3, stateless=1, max_warmups=1, events=2)),
        ("eager", Bounds(instances=3, initial=2, standbys=0, events=2, start="cold")),
    ],
)
def test_ha_answers_memoised_by_shape_are_its_answers_on_every_view(proto, bounds):
    """The premise of :class:`~rebalproof.model.assignors.order_memo.OrderMemo` for ``ha``: on
    every view an exploration asks, the answer memoised by shape (renamed back) is the answer
    ``ha`` gives on the view itself; and views of one shape were asked (the memo is used)."""
    from rebalproof.model.assignors import ha
    from rebalproof.model.assignors.order_memo import OrderMemo

    model = GroupModel(protocol=protocol(proto), bounds=bounds, assignor=ha.make(), assignor_name="ha")
    explore(model)
    views = model.views_asked()
    memo = OrderMemo(ha.assign)
    for view in views:
        assert memo(view) == ha.assign(view), view
    assert memo.hits > 0 and memo.misses < len(views)


def test_order_memo_asks_about_the_view_itself_when_string_and_natural_order_disagree():
    from rebalproof.model.assignment import Assignment
    from rebalproof.model.assignors.order_memo import OrderMemo
    from rebalproof.model.view import Member, RebalanceInput, Task

    asked = []

    def last_gets_all(view):
        asked.append(view.member_ids)
        return Assignment.build({sorted(view.member_ids)[-1]: {"active": ["0_0"]}})  # plain string order: an order blind to natural order

    memo = OrderMemo(last_gets_all)
    view = RebalanceInput(tasks=(Task(id="0_0"),), members=(Member(id="I2"), Member(id="I10")))
    assert memo(view).of("I2").active == ("0_0",) and asked == [("I2", "I10")]


@pytest.mark.parametrize(
    "proto, assignor, bounds",
    [
        ("cooperative", "ha", Bounds(events=2)),
        # unequal capacities: three tasks of one subtopology, so that some layouts are balanced by
        # every reading of "within one" with capacities (the premise asks that much)
        ("eager", "sticky", Bounds(events=2, subtopologies=1, partitions=3, capacities=(2, 1, 1))),
        ("learner", "learner", Bounds(events=2)),  # leaving members
    ],
)
def test_the_judges_quick_fixpoint_premise_is_the_premise_on_every_view(proto, assignor, bounds):
    """:func:`~rebalproof.properties.stability.premise_holds` (the judge skips ``fixpoint`` where it
    is false) answers as :func:`fixpoint_premise` on every view an exploration asks, both ways."""
    from rebalproof.properties.stability import balanced_some_way_only, fixpoint_premise, premise_holds

    model = GroupModel(protocol=protocol(proto), bounds=bounds, assignor=builtin(assignor).make(), assignor_name=assignor)
    explore(model)
    views = model.views_asked()
    quick = [premise_holds(v) for v in views]
    assert quick == [not fixpoint_premise(v) or balanced_some_way_only(v, fixpoint_premise(v)) for v in views]
    assert any(quick) and not all(quick), (sum(quick), len(quick))


@settings(max_examples=300)
@given(st.data())
def test_the_quick_fixpoint_premise_is_the_premise_on_any_view(data):
    from rebalproof.properties.common import current_assignment
    from rebalproof.properties.stability import balanced_some_way_only, fixpoint_premise, premise_holds

    view = data.draw(ha_views())
    if data.draw(st.booleans()):  # settle it: ha's answer held, every copy caught up (the premise often holds)
        answer = builtin("ha").make()(view)
        view = view.replace(members=tuple(
            m.__class__(id=m.id, capacity=m.capacity, leaving=m.leaving, lags={t: 0 for t in view.stateful_task_ids},
                        **{r: getattr(answer.of(m.id), r) for r in ("active", "standby", "warmup")})
            for m in view.members))
    reasons = fixpoint_premise(view)
    assert premise_holds(view) == (not reasons or balanced_some_way_only(view, reasons)), current_assignment(view)
