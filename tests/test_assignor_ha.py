"""``ha`` (KIP-441): the seed scenarios, the six required properties, convergence within Kafka's bound.

The properties are checked as certificates on hypothesis-generated small inputs (a local
strategy, :func:`views`), never against one golden answer; the seed scenarios are checked
against the KIP's answers, which ``ha`` reproduces exactly (where the KIP made a free choice,
the test says so).

Convergence is simulated as the KIP describes it: membership fixed, and between rounds every
copy ``ha`` assigned finishes restoring (its lag becomes 0; state a member stops holding stays
on its disk with the lag it had). The bound is Kafka's convergence test's: after one added
instance, ``ceil(stateful tasks / max_warmup_replicas) + 1`` rebalances (rounded up: a single
move always takes two rebalances, one to warm up and one to hand over).
"""

from __future__ import annotations

import doctest
import math
import os
import subprocess
import sys
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rebalproof.model.assignment import Assignment, MemberAssignment
from rebalproof.model.assignors import builtin
from rebalproof.model.assignors import ha, ha_flow, ha_round, ha_settle, ha_target
from rebalproof.model.assignors.ha_flow import quota_box, transport
from rebalproof.model.assignors.ha_settle import current_if_settled, is_settled
from rebalproof.model.assignors.ha_target import plan_target, standby_count
from rebalproof.model.balance import is_balanced, within_one
from rebalproof.model.codec import decode_input, encode_input
from rebalproof.model.names import id_key
from rebalproof.model.ranking import lag_of, most_caught_up, rank
from rebalproof.model.seeds441 import SCENARIOS, rounds
from rebalproof.model.view import Config, Member, RebalanceInput, Task

assign = ha.assign
ACCEPTABLE = 100
LAGS = (None, 0, 50, ACCEPTABLE, ACCEPTABLE + 1, 1000, 5000)


# -- a local strategy of small leader views ---------------------------------------------------
@st.composite
def task_sets(draw):
    """1-3 subtopologies of 1-4 partitions; a subtopology is stateful or not (mostly stateful)."""
    tasks = []
    for sub in range(draw(st.integers(1, 3))):
        stateful = draw(st.sampled_from((True, True, True, False)))
        tasks += [Task(id=f"{sub}_{p}", stateful=stateful) for p in range(draw(st.integers(1, 4)))]
    return tuple(tasks)


def capacities(n):
    """Mostly equal capacities (1), sometimes 1-3 stream threads each."""
    return st.one_of(st.just([1] * n), st.lists(st.integers(1, 3), min_size=n, max_size=n))


def configs(*, min_warmups=0):
    return st.builds(
        Config,
        num_standby_replicas=st.integers(0, 2),
        acceptable_recovery_lag=st.just(ACCEPTABLE),
        max_warmup_replicas=st.integers(min_warmups, 3),
    )


@st.composite
def views(draw, *, min_warmups=0):
    """Any valid view: random current roles (even two actives for a task), lags and leaving flags."""
    n = draw(st.integers(1, 5))
    caps = draw(capacities(n))
    tasks = draw(task_sets())
    ids = [f"I{i + 1}" for i in range(n)]
    held = {m: {"active": [], "standby": [], "warmup": []} for m in ids}
    lags = {m: {} for m in ids}
    for task in tasks:
        roles = (None, None, "active", "standby", "warmup") if task.stateful else (None, None, "active")
        drawn = draw(st.lists(st.sampled_from(roles), min_size=n, max_size=n))
        lagged = draw(st.lists(st.sampled_from(LAGS), min_size=n, max_size=n)) if task.stateful else [None] * n
        for m, role, lag in zip(ids, drawn, lagged):
            if role:
                held[m][role].append(task.id)
            if lag is not None:
                lags[m][task.id] = lag
    leaving = draw(st.lists(st.sampled_from((False, False, False, True)), min_size=n, max_size=n))
    members = tuple(
        Member(id=m, capacity=c, leaving=gone, lags=lags[m], **{r: tuple(v) for r, v in held[m].items()})
        for m, c, gone in zip(ids, caps, leaving)
    )
    previous = draw(st.one_of(st.none(), st.lists(st.sampled_from(ids), unique=True).map(tuple)))
    return RebalanceInput(config=draw(configs(min_warmups=min_warmups)), tasks=tasks, members=members, previous_members=previous)


@st.composite
def groups(draw):
    """An empty group (no state anywhere) with at least one warmup allowed: the start of a convergence run."""
    n = draw(st.integers(1, 4))
    caps = draw(capacities(n))
    return RebalanceInput(
        config=draw(configs(min_warmups=1)),
        tasks=draw(task_sets()),
        members=tuple(Member(id=f"I{i + 1}", capacity=c) for i, c in enumerate(caps)),
    )


# -- simulation helpers ---------------------------------------------------------------------
def restored(view: RebalanceInput, out: Assignment, done=None) -> RebalanceInput:
    """The next round's view: members hold what ``out`` gave them; the copies in ``done`` (all by default) caught up."""
    members = []
    for m in view.members:
        given_ = out.of(m.id)
        lags = dict(m.lags)
        for t in given_.copies:
            if view.task(t).stateful and (done is None or (m.id, t) in done):
                lags[t] = 0
        members.append(Member(id=m.id, capacity=m.capacity, leaving=m.leaving, active=given_.active, standby=given_.standby, warmup=given_.warmup, lags=lags))
    return view.replace(members=tuple(members), previous_members=view.member_ids)


def run_to_rest(view: RebalanceInput, limit: int):
    """Iterate ``ha`` with full restores until it stops probing; (rounds, last output, view after it)."""
    for round_ in range(1, limit + 1):
        out = assign(view)
        after = restored(view, out)
        if not out.probing_rebalance:
            return round_, out, after
        view = after
    pytest.fail(f"ha still probing after {limit} rounds: {encode_input(view)}")


def kafka_bound(view: RebalanceInput) -> int:
    """Kafka's convergence-test bound after one added instance: ceil(stateful tasks / max_warmup_replicas) + 1."""
    return math.ceil(len(view.stateful_task_ids) / view.config.max_warmup_replicas) + 1


def without_leaving(view: RebalanceInput) -> RebalanceInput:
    return view.replace(members=tuple(Member(id=m.id, capacity=m.capacity, active=m.active, standby=m.standby, warmup=m.warmup, lags=dict(m.lags)) for m in view.members))


# -- registry and doctests ------------------------------------------------------------------
@pytest.mark.parametrize("module", [ha, ha_flow, ha_target, ha_round, ha_settle])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


def test_registered_as_the_kip441_assignor():
    from rebalproof.model.assignors.order_memo import OrderMemo

    info = builtin("ha")
    made = info.make()  # ha, its answers memoised by shape (model/assignors/order_memo.py)
    assert isinstance(made, OrderMemo) and made.assign is assign
    assert (info.rules, info.equivariant, info.seed) == ("ha", False, "002 Proposed Assignment/Rebalance Algorithm")


def test_no_members_no_tasks():
    assert assign(RebalanceInput()) == Assignment()
    assert assign(RebalanceInput(tasks=(Task(id="0_0"),))) == Assignment()


# -- the KIP-441 scenarios ------------------------------------------------------------------
@pytest.mark.parametrize("rebalance", SCENARIOS, ids=[f"{r.scenario}#{r.round}" for r in SCENARIOS])
def test_reproduces_the_kip_answer(rebalance):
    assert assign(rebalance.view) == rebalance.expected


@pytest.mark.parametrize("name", ["scaling-out", "scaling-in-1", "scaling-in-2"])
def test_scenario_ends_in_a_fixpoint(name):
    """After the KIP's last round, once every copy has restored, ha keeps the stable state."""
    last = rounds(name)[-1]
    out = assign(last.view)
    assert not out.probing_rebalance
    assert assign(restored(last.view, out)) == out


def test_scaling_in_pt2_free_choice_of_the_task_i3_takes_over():
    """Free choice, both allowed: the KIP moves T4 to I3; ha's target moves T2, where I3 has (lagging) state.

    The first round's answer is the same either way (every task keeps its standby on the
    other instance), so ha reproduces the KIP's round exactly; the choice shows only in
    what ha would do if I3 restored T2 first.
    """
    first, second = rounds("scaling-in-2")
    target = plan_target(first.view)
    assert target.active_of("T2") == "I3" and target.active_of("T4") == "I2"
    kip_target = {"T1": "I2", "T2": "I2", "T3": "I3", "T4": "I3"}
    for layout in ({t: target.active_of(t) for t in first.view.task_ids}, kip_target):
        as_assignment = Assignment.build({m: {"active": [t for t, o in layout.items() if o == m]} for m in ("I2", "I3")})
        assert is_balanced(first.view, as_assignment)
    # The KIP's narrative (I3 restores T4) leads to the KIP's stable state; restoring T2 instead leads to ha's.
    assert assign(second.view) == second.expected
    t2_first = second.view.replace(members=tuple(
        Member(id=m.id, active=m.active, standby=m.standby, lags={**dict(m.lags), **({"T2": 0, "T4": 30_000} if m.id == "I3" else {})})
        for m in second.view.members
    ))
    out = assign(t2_first)
    assert out.of("I3").active == ("T2", "T3") and is_balanced(t2_first, out) and not out.probing_rebalance


def test_scaling_out_free_choice_of_which_of_t1_t3_moves():
    """Free choice, both allowed: I3 may take T1 or T3 (both on I1, both restored by I3's warmups).

    The KIP names T3 ("revoking the active task T3 from I1"); ha's round-robin tie-break picks
    T3 too. Both layouts are balanced and put actives on caught-up instances.
    """
    second = rounds("scaling-out")[1]
    out = assign(second.view)
    assert out.of("I3").active == ("T3",)
    swapped = Assignment.build({"I1": {"active": ["T3"]}, "I2": {"active": ["T2"]}, "I3": {"active": ["T1"]}})
    assert is_balanced(second.view, swapped)
    assert all(m in most_caught_up(second.view, t) for m, a in swapped.members for t in a.active)


@pytest.mark.parametrize("standbys", [0, 1])
def test_happy_path_of_the_rejected_alternatives(standbys):
    """KIP-441 "Rejected Alternatives", happy path: two nodes, two tasks, a node just replaced.

    Without standbys: "Node2: [Task2(moving)]" -- one warmup. With one standby, Node2 already
    holds (cold) standbys of both tasks, so "we cannot create our moving task": the cold
    standby of Task2 *is* the copy restoring towards the move, and no extra copy is needed.
    """
    view = RebalanceInput(
        config=Config(num_standby_replicas=standbys),
        tasks=(Task(id="Task1"), Task(id="Task2")),
        members=(Member(id="Node1", active=("Task1", "Task2"), lags={"Task1": 0, "Task2": 0}), Member(id="Node2")),
    )
    out = assign(view)
    assert out.of("Node1").active == ("Task1", "Task2") and out.probing_rebalance
    if standbys:
        assert out.of("Node2").standby == ("Task1", "Task2") and out.of("Node2").warmup == ()
    else:
        assert out.of("Node2").warmup == ("Task2",)
    done = assign(restored(view, out))
    assert done.of("Node2").active == ("Task2",) and not done.probing_rebalance


def test_stateless_tasks_fill_the_new_instance_at_once_and_stay_put_otherwise():
    """KIP-441 #4/#6: stateless tasks need no warmup; they are packed around the stateful actives, sticky."""
    tasks = tuple(Task(id=f"0_{p}") for p in range(2)) + tuple(Task(id=f"1_{p}", stateful=False) for p in range(3))
    old = (
        Member(id="I1", active=("0_0", "1_0", "1_2"), lags={"0_0": 0}),
        Member(id="I2", active=("0_1", "1_1"), lags={"0_1": 0}),
    )
    stable = RebalanceInput(config=Config(max_warmup_replicas=1), tasks=tasks, members=old)
    assert assign(stable) == current_if_settled(stable), "already balanced: unchanged"
    grown = stable.replace(members=old + (Member(id="I3"),))
    out = assign(grown)
    assert out.of("I3").active and all(t.startswith("1_") for t in out.of("I3").active)
    assert not out.probing_rebalance and is_balanced(grown, out)
    assert out.of("I1").active[0] == "0_0" and out.of("I2").active[0] == "0_1", "stateful actives never moved"


# -- the six required properties on generated inputs ----------------------------------------
@settings(max_examples=100)
@given(views())
def test_required_properties(view):
    before = encode_input(view)
    out = assign(view)
    assert encode_input(view) == before, "the input is not mutated"
    assert out == assign(decode_input(before)), "deterministic, also on an equal rebuilt view"
    assert out.member_ids == view.member_ids, "every input member, nothing else"
    k = standby_count(view)
    extras = 0
    for task in view.tasks:
        copies = out.copies_of(task.id)
        holders = [m for m, _ in copies]
        assert len(holders) == len(set(holders)), "no-colocation"
        (active,) = out.actives_of(task.id)  # one-active
        standbys = out.holders(task.id, "standby")
        if not task.stateful:
            assert copies == ((active, "active"),), "stateless tasks get no standbys or warmups"
            continue
        assert active in most_caught_up(view, task.id), "#1 caught-up active"
        assert len(standbys) == k, "#2 standby count"
        extras += len(copies) - 1 - k
    assert extras <= view.config.max_warmup_replicas, "#3 warmup bound (extra copies, whatever they are called)"
    assert extras == sum(len(a.warmup) for _, a in out.members)


@settings(max_examples=100)
@given(views())
def test_standbys_and_warmups_go_where_the_kip_says(view):
    """#2: standbys on the next most caught-up instances; #3: warmups only towards the target."""
    out = assign(view)
    if current_if_settled(view) is not None:
        return  # #5 keeps the current standbys wherever they are
    target = plan_target(view)
    for task_id in view.stateful_task_ids:
        (active,) = out.actives_of(task_id)
        standbys = out.holders(task_id, "standby")
        others = [m for m in view.member_ids if m != active and m not in standbys]
        worst_standby = max((rank(view, m, task_id) for m in standbys), default=-1)
        assert all(rank(view, m, task_id) >= worst_standby for m in others)
        assert set(out.holders(task_id, "warmup")) <= set(target.holders(task_id))


@settings(max_examples=100)
@given(views())
def test_settled_input_is_returned_unchanged(view):
    """#5: a valid, balanced current assignment with ready actives and the standby count is kept."""
    current = Assignment(members={m.id: MemberAssignment(active=m.active, standby=m.standby) for m in view.members})
    if is_settled(view, current):
        assert assign(view) == current
    else:
        assert current_if_settled(view) is None


@settings(max_examples=100)
@given(views())
def test_probing_exactly_while_not_at_rest(view):
    """#6: no probing once the result is balanced; probing means something is restoring towards the target."""
    out = assign(view)
    warmups = sum(len(a.warmup) for _, a in out.members)
    if is_settled(view, out):
        assert not out.probing_rebalance and warmups == 0
    if warmups:
        assert out.probing_rebalance, "a warmup is only worth it if a probing rebalance will use it"
    if out.probing_rebalance:
        assert not is_settled(view, out)


@settings(max_examples=100)
@given(views(min_warmups=1))
def test_fixpoint_on_its_own_output_once_restored(view):
    """#5 on ha's own answers: once every copy it assigned has caught up, the answer it stops probing on stays."""
    _, out, after = run_to_rest(view, limit=40)
    again = assign(after)
    assert again == out
    if plan_target(after).balanced:
        assert is_balanced(without_leaving(after), again)


@settings(max_examples=60)
@given(views())
def test_leaving_is_ignored(view):
    """KIP-441 has no leaving tag: ha assigns a leaving member like any other."""
    assert assign(view) == assign(without_leaving(view))


# -- convergence ----------------------------------------------------------------------------
@settings(max_examples=80)
@given(groups(), st.integers(1, 3))
def test_converges_within_kafkas_bound_after_one_added_instance(group, capacity):
    rounds_, stable, view = run_to_rest(group, limit=5)
    assert rounds_ == 1, "from an empty group every member is equally caught up: one rebalance"
    grown = view.replace(members=view.members + (Member(id=f"I{len(view.members) + 1}", capacity=capacity),))
    bound = kafka_bound(grown)
    taken, out, after = run_to_rest(grown, limit=4 * bound)
    assert taken <= bound
    if plan_target(after).balanced:
        assert is_balanced(grown, out)
    assert assign(after) == out


@settings(max_examples=60)
@given(groups(), st.data())
def test_converges_within_kafkas_bound_after_one_removed_instance(group, data):
    _, _, view = run_to_rest(group, limit=5)
    if len(view.members) < 2:
        return
    gone = data.draw(st.sampled_from(view.member_ids))
    shrunk = view.replace(members=tuple(m for m in view.members if m.id != gone))
    bound = kafka_bound(shrunk)
    taken, out, after = run_to_rest(shrunk, limit=4 * bound)
    assert taken <= bound
    if plan_target(after).balanced:
        assert is_balanced(shrunk, out)


@settings(max_examples=80)
@given(views(min_warmups=1))
def test_converges_from_any_state(view):
    """From arbitrary roles and lags: each round, every active target copy placed catches up, so the
    number of target actives still to restore falls by at least min(max_warmup_replicas, left)."""
    bound = math.ceil(len(view.stateful_task_ids) / view.config.max_warmup_replicas) + 2
    taken, _, _ = run_to_rest(view, limit=4 * bound + 4)
    assert taken <= bound


@settings(max_examples=60)
@given(views(min_warmups=1), st.randoms(use_true_random=False))
def test_converges_when_restores_finish_in_any_order(view, rng):
    """Fairness only: each round some of the copies still restoring finish (at least one), the rest progress."""
    for _ in range(100):
        out = assign(view)
        if not out.probing_rebalance:
            break
        pending = sorted(
            ((m, t) for m, a in out.members for t in a.copies
             if view.task(t).stateful and lag_of(view, m, t) > view.config.acceptable_recovery_lag),
            key=lambda p: (id_key(p[0]), id_key(p[1])),
        )
        done = {p for p in pending if rng.random() < 0.5} or set(pending[:1])
        view = restored(view, out, done=done)
        view = view.replace(members=tuple(
            Member(id=m.id, capacity=m.capacity, leaving=m.leaving, active=m.active, standby=m.standby, warmup=m.warmup,
                   lags={**dict(m.lags), **{t: max(ACCEPTABLE + 1, min(lag_of(view, m.id, t), 5000) // 2)
                                            for t in m.copies if view.task(t).stateful and (m.id, t) not in done
                                            and lag_of(view, m.id, t) > ACCEPTABLE}})
            for m in view.members))
    else:
        pytest.fail("no convergence in 100 rounds with fair restores")


def test_no_warmups_allowed_means_no_warmups_and_no_endless_probing():
    """max_warmup_replicas = 0 (below KIP-441's minimum of 1): nothing moves that needs a warmup."""
    view = rounds("scaling-out")[0].view
    view = view.replace(config=Config(num_standby_replicas=0, max_warmup_replicas=0))
    out = assign(view)
    assert not any(a.warmup for _, a in out.members) and not out.probing_rebalance
    assert out.of("I3").active == ()


# -- the exact tools the target rests on ----------------------------------------------------
@settings(max_examples=200)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4), st.data())
def test_quota_box_is_exactly_the_balanced_count_vectors(caps, data):
    members = [f"I{i}" for i in range(len(caps))]
    capacity = dict(zip(members, caps))
    counts = dict(zip(members, data.draw(st.lists(st.integers(0, 5), min_size=len(caps), max_size=len(caps)))))
    box = quota_box(sum(counts.values()), capacity)
    inside = all(lo <= counts[m] <= hi for m, (lo, hi) in box.items())
    assert inside == within_one(counts, capacity)


@settings(max_examples=100)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4), st.lists(st.integers(0, 4), min_size=4, max_size=4), st.integers(0, 6))
def test_quota_box_with_start_fills_up_to_a_common_water_level(caps, start, total):
    members = [f"I{i}" for i in range(len(caps))]
    capacity = dict(zip(members, caps))
    held = dict(zip(members, start))
    box = quota_box(total, capacity, start=held)
    assert sum(lo for lo, _ in box.values()) <= total <= sum(hi for _, hi in box.values())
    level = max((Fraction(held[m] + hi, capacity[m]) for m, (_, hi) in box.items() if hi), default=Fraction(0))
    assert all(Fraction(held[m] + lo + 1, capacity[m]) >= level for m, (lo, _) in box.items())


def test_transport_says_when_bounds_cannot_be_met():
    arcs = [("T1", "I1", 0), ("T2", "I1", 0)]
    assert transport({"T1": 1, "T2": 1}, arcs, {"I1": (0, 1)}) is None
    assert transport({"T1": 1, "T2": 1}, arcs, {"I1": (0, 2)}) == {"T1": ("I1",), "T2": ("I1",)}
    assert transport({"T1": 2}, [("T1", "I1", 0), ("T1", "I2", 0)], {"I1": (0, 2), "I2": (0, 2)}) == {"T1": ("I1", "I2")}


def test_same_answers_whatever_the_hash_seed():
    """Determinism by construction: no set or dict order of the interpreter reaches the answer."""
    program = (
        "from rebalproof.model.assignors.ha import assign\n"
        "from rebalproof.model.codec import dumps_canonical, encode_assignment\n"
        "from rebalproof.model.seeds441 import SCENARIOS\n"
        "from rebalproof.model.view import Config, Member, RebalanceInput, Task\n"
        "tasks = tuple(Task(id=f'{s}_{p}', stateful=s != 2) for s in range(3) for p in range(4))\n"
        "views = [r.view for r in SCENARIOS] + [RebalanceInput(config=Config(num_standby_replicas=k, max_warmup_replicas=1),\n"
        "    tasks=tasks, members=tuple(Member(id=f'I{i}', capacity=1 + i % 2, active=tuple(t.id for t in tasks[i::n]),\n"
        "    lags={t.id: 0 for t in tasks[i::n]}) for i in range(n)) + (Member(id='J'),)) for n in (2, 3) for k in (0, 1, 2)]\n"
        "print(dumps_canonical([encode_assignment(assign(v)) for v in views]))\n"
    )
    answers = {
        subprocess.run(
            [sys.executable, "-c", program], env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True, check=True
        ).stdout
        for seed in ("1", "2")
    }
    assert len(answers) == 1
