"""The built-in assignors sticky, eager and learner: seed scenarios, versions, and properties on small inputs.

The learner assignor is judged on the seeds by the decisions the KIP-429 rules *force*
(who gets which actives, learners kept, how many new learners, the resulting loads); where
the seed made a free choice (which task becomes a learner, which of two equal members takes
an orphan) any choice the rules allow is accepted, and both the seed's answer and ours must
satisfy those rules (:func:`learner_problems`).
"""

from __future__ import annotations

import doctest
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rebalproof.errors import InputError
from rebalproof.model.assignment import ROLES
from rebalproof.model.assignors import AssignorInfo, parse_options
from rebalproof.model.assignors import common, eager, learner, sticky
from rebalproof.model.balance import measure_balance
from rebalproof.model.codec import decode_input, encode_input
from rebalproof.model.ranking import is_caught_up
from rebalproof.model.seeds429 import all_rebalances, scenario
from rebalproof.model.view import Config, Member, RebalanceInput, Task

REBALANCES = all_rebalances()
IDS = [f"{r.scenario}#{r.round}" for r in REBALANCES]

# Where our one deterministic rule picks a different learner task than the seed did
# (the seed sheds S1's T1 / S2's T3; we shed a donor's highest-id task, T2 / T4).
DIFFERS_FROM_SEED = {("scale-up", 1), ("scale-up", 2), ("leader-crash-during-scaling", 1)}


# -- the KIP-429 rules as a checker (test-local) -----------------------------------------------------


def _leaving(view, version):
    leaving = {m.id for m in view.members if m.leaving} if version >= 2 else set()
    return set() if len(leaving) == len(view.members) else leaving


def _eligible_recipient(view, member, version):
    return member not in _leaving(view, version) and (version >= 2 or view.is_new(member) is True)


def _active_steps(view, task, version):
    """The seed's five candidate sets for a stateful task's active, in order."""
    staying = [m for m in view.member_ids if m not in _leaving(view, version)]
    warm = [m for m in view.holders(task, "warmup") if m in staying]
    previous = [
        m.id for m in view.members if task in m.active or (task not in m.copies and is_caught_up(view, m.id, task))
    ]
    return (
        [m for m in warm if is_caught_up(view, m, task)],
        previous,
        warm,
        [m for m in view.holders(task, "standby") if m in staying],
        staying,
    )


def _targets(view, out, version):
    """Staying members' load once learners take over: actives not being learned, plus learners."""
    staying = [m for m in view.member_ids if m not in _leaving(view, version)]
    learned = {t for m in out.member_ids for t in out.of(m).warmup}
    return {
        m: sum(1 for t in out.of(m).active if view.task(t).stateful and t not in learned) + len(out.of(m).warmup)
        for m in staying
    }


def learner_problems(view: RebalanceInput, out, version: int) -> list[str]:
    """Every way ``out`` breaks the KIP-429 learner rules (unit capacities, imbalance 0)."""
    problems = []
    leaving = _leaving(view, version)
    if set(out.member_ids) != set(view.member_ids):
        problems.append("members named differ from the input's")
    for task in view.task_ids:
        holders = out.actives_of(task)
        if len(holders) != 1:
            problems.append(f"{task} has actives {holders}")
            continue
        holder = holders[0]
        if view.task(task).stateful:
            step = next(s for s in _active_steps(view, task, version) if s)
            if holder not in step:
                problems.append(f"{task} active on {holder}, the rules allow {step}")
    new = []
    for member in view.member_ids:
        mine = out.of(member)
        if len(set(mine.copies)) != len(mine.copies):
            problems.append(f"{member} holds a task twice")
        for task in mine.warmup:
            if not view.task(task).stateful:
                problems.append(f"learner for stateless {task}")
            if task not in view.member(member).warmup:
                new.append((task, member))
        if member in leaving:
            kept = set(view.member(member).active) | {t for t, _ in view.member(member).lags}
            if mine.warmup or mine.standby or not set(mine.active) <= kept:
                problems.append(f"leaving {member} got new copies")
    for task in view.stateful_task_ids:
        for member in view.holders(task, "warmup"):
            if member not in leaving and out.actives_of(task) != (member,) and task not in out.of(member).warmup:
                problems.append(f"{member}'s learner of {task} was dropped though not promoted")
    targets = _targets(view, out, version)
    for task, recipient in new:
        donor = out.actives_of(task)[0]
        if not _eligible_recipient(view, recipient, version):
            problems.append(f"new learner {task} on {recipient}, who may not take learners in version {version}")
        if donor not in leaving and not targets[donor] + 1 > targets[recipient]:
            problems.append(f"learner {task} moved from {donor} to {recipient} without need")
    learned = {t for m in out.member_ids for t in out.of(m).warmup}
    for donor in view.member_ids:
        sheddable = [t for t in out.of(donor).active if view.task(t).stateful and t not in learned]
        if not sheddable:
            continue
        for recipient in view.member_ids:
            if recipient == donor or not _eligible_recipient(view, recipient, version):
                continue
            if donor in leaving or targets[donor] > targets[recipient] + 1:
                problems.append(f"{donor} should still hand a task to {recipient}")
    return problems


def forced(view, out, version):
    """The decisions the rules force, whatever the free choices."""
    actives = {}
    for task in view.stateful_task_ids:
        steps = _active_steps(view, task, version)
        first = next(i for i, s in enumerate(steps) if s)
        if first < 4 and len(steps[first]) == 1:  # one candidate in steps 1-4: no choice
            actives[task] = out.actives_of(task)
    kept = {(t, m) for m in view.member_ids for t in view.member(m).warmup if t in out.of(m).warmup}
    new = sum(len(out.of(m).warmup) for m in view.member_ids) - len(kept)
    counts = sorted(len(out.of(m).active) for m in view.member_ids)
    return {
        "actives": actives,
        "kept learners": kept,
        "new learners": new,
        "target loads": sorted(_targets(view, out, version).values()),
        "active counts": counts,
        "leaving": {m.id: out.of(m.id) for m in view.members if m.id in _leaving(view, version)},
        "standbys": {m: out.of(m).standby for m in view.member_ids},
    }


# -- seeds -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("r", REBALANCES, ids=IDS)
def test_seed_answer_follows_the_rules_of_its_version(r):
    assert learner_problems(r.view, r.expected, r.learner_version) == []


@pytest.mark.parametrize("r", REBALANCES, ids=IDS)
def test_learner_reproduces_the_forced_decisions_of_every_seed_rebalance(r):
    out = learner.make(version=r.learner_version)(r.view)
    assert learner_problems(r.view, out, r.learner_version) == []
    assert forced(r.view, out, r.learner_version) == forced(r.view, r.expected, r.learner_version)
    if (r.scenario, r.round) in DIFFERS_FROM_SEED:
        assert out != r.expected and r.free_choice
        # same donor, same recipient: only which of the donor's tasks differs
        pairs = lambda a: sorted((a.actives_of(t)[0], m) for m in a.member_ids for t in a.of(m).warmup)
        assert pairs(out) == pairs(r.expected)
    else:
        assert out == r.expected


def test_scale_down_and_host_swap_need_version_2():
    for name in ("scale-down", "host-swap"):
        broken = [r.round for r in scenario(name).rebalances if learner_problems(r.view, r.expected, 1)]
        assert broken, name
    r = scenario("host-swap").rebalances[1]
    v1, v2 = learner.make(version=1)(r.view), learner.make(version=2)(r.view)
    assert v1.of("S3").warmup == ("T2",) and v1.of("S4").warmup == ("T4",)  # kept, none new: S3, S4 are not new
    assert v2 == r.expected


def test_leader_crash_before_scaling_needs_version_1():
    r = scenario("leader-crash-before-scaling").rebalances[0]
    assert learner_problems(r.view, r.expected, 2)  # version 2 would fix the skew
    out = learner.make(version=2)(r.view)
    assert out.of("S3").warmup or out.of("S4").warmup
    assert learner.make(version=1)(r.view) == r.expected


# -- learner details -------------------------------------------------------------------------------


def _view(members, tasks=("T1", "T2", "T3", "T4"), stateless=(), previous=None, **config):
    return RebalanceInput(
        config=Config(**config),
        tasks=tuple(Task(id=t) for t in tasks) + tuple(Task(id=t, stateful=False) for t in stateless),
        members=tuple(members),
        previous_members=previous,
    )


def test_learner_prefers_a_member_with_a_matching_standby():
    view = _view([Member(id="S1", active=("T1", "T2", "T3")), Member(id="S2", active=("T4",), standby=("T2",), lags={"T2": 0})])
    out = learner.make()(view)
    assert out.of("S2").warmup == ("T2",) and out.of("S1").active == ("T1", "T2", "T3")


def test_stateless_tasks_move_at_once():
    view = _view([Member(id="I1", active=("0_0", "0_1", "1_0", "1_1")), Member(id="I2")], tasks=("0_0", "0_1"), stateless=("1_0", "1_1"), previous=("I1",))
    out = learner.make(version=1)(view)
    assert out.of("I2").warmup == ("0_1",) and out.of("I2").active == ("1_1",)
    assert out.of("I1").active == ("0_0", "0_1", "1_0")


def test_imbalance_tolerance_sheds_only_above_it():
    tasks = tuple(f"T{i}" for i in range(1, 8))
    members = [Member(id="S1", active=tasks[:3]), Member(id="S2", active=tasks[3:6]), Member(id="S3", active=tasks[6:])]
    view = _view(members, tasks=tasks)
    strict, tolerant = learner.make(imbalance=0)(view), learner.make(imbalance=0.3)(view)
    assert [len(strict.of(m).warmup) for m in ("S1", "S2", "S3")] == [0, 0, 1]
    assert all(not tolerant.of(m).warmup for m in ("S1", "S2", "S3"))


def test_orphans_go_to_unready_learner_then_standby_then_least_loaded():
    view = _view(
        [Member(id="I1", warmup=("T1",), lags={"T1": 10**6}), Member(id="I2", standby=("T2",)), Member(id="I3")],
        tasks=("T1", "T2", "T3"),
    )
    out = learner.make()(view)
    assert [out.of(m).active for m in ("I1", "I2", "I3")] == [("T1",), ("T2",), ("T3",)]


def test_learner_options_are_checked_with_a_clear_message():
    for bad, words in (({"version": 3}, "must be 1 or 2"), ({"imbalance": -0.1}, "at least 0"), ({"version": True}, "must be 1 or 2")):
        with pytest.raises(InputError, match=words):
            learner.make(**bad)
    options = parse_options(learner.INFO, "version=1,imbalance=0.2")
    assert options == {"version": 1, "imbalance": 0.2}
    view = scenario("host-swap").rebalances[0].view
    assert learner.INFO.make(**options)(view) == learner.make(version=1, imbalance=0.2)(view)


def test_registered_infos():
    for module, rules in ((sticky, "sticky"), (eager, "eager"), (learner, "learner")):
        info = module.INFO
        assert isinstance(info, AssignorInfo) and info.name == rules and info.rules == rules and not info.equivariant
        assert info.seed and info.summary and callable(info.make())


@pytest.mark.parametrize("module", [common, sticky, eager, learner])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


# -- small generated inputs (a local strategy) -----------------------------------------------------

_TASK_POOL = ("0_0", "0_1", "0_2", "1_0", "1_1", "2_0")
_LAGS = (None, None, 0, 5_000, 20_000, 10**6)


@st.composite
def small_views(draw):
    """Valid leader views with 1-4 members and up to 6 tasks, every field exercised."""
    n = draw(st.integers(1, 4))
    members = [f"I{i}" for i in range(1, n + 1)]
    task_ids = draw(st.lists(st.sampled_from(_TASK_POOL), max_size=6, unique=True))
    tasks = tuple(Task(id=t, stateful=draw(st.sampled_from((True, True, False)))) for t in task_ids)
    built = []
    for member in members:
        roles = {r: [] for r in ROLES}
        lags = {}
        for task in task_ids:
            role = draw(st.sampled_from((None, None, "active", "active", "standby", "warmup")))
            if role:
                roles[role].append(task)
            lag = draw(st.sampled_from(_LAGS))
            if lag is not None:
                lags[task] = lag
        built.append(
            Member(
                id=member,
                capacity=draw(st.sampled_from((1, 1, 2, 3))),
                leaving=draw(st.sampled_from((False, False, False, True))),
                lags=lags,
                **{r: tuple(v) for r, v in roles.items()},
            )
        )
    previous = draw(st.one_of(st.none(), st.lists(st.sampled_from(members + ["I9"]), unique=True).map(tuple)))
    config = Config(num_standby_replicas=draw(st.integers(0, 2)), acceptable_recovery_lag=draw(st.sampled_from((0, 10_000))))
    return RebalanceInput(config=config, tasks=tasks, members=tuple(built), previous_members=previous)


ASSIGNORS = {
    "sticky": sticky.make(),
    "eager": eager.make(),
    "learner-v1": learner.make(version=1),
    "learner-v2": learner.make(version=2),
    "learner-v2-imbalance": learner.make(version=2, imbalance=0.2),
}


@pytest.mark.parametrize("name", sorted(ASSIGNORS))
@settings(max_examples=120)
@given(view=small_views())
def test_structural_promises(name, view):
    assign = ASSIGNORS[name]
    before = encode_input(view)
    out = assign(view)
    assert encode_input(view) == before  # input not mutated
    assert assign(decode_input(before)) == out  # deterministic, and equal inputs give equal answers
    assert out.member_ids == view.member_ids  # every member named
    assert not out.probing_rebalance
    for task in view.task_ids:
        assert len(out.actives_of(task)) == 1, task
    for member, roles in out.members:
        assert len(set(roles.copies)) == len(roles.copies), member  # no member holds two copies of a task
        assert all(view.has_task(t) for t in roles.copies)


@settings(max_examples=150)
@given(view=small_views())
def test_sticky_balance_standbys_and_fixpoint(view):
    out = sticky.assign(view)
    assert measure_balance(view, out).active_within_one
    staying = [m.id for m in view.members if not m.leaving] or list(view.member_ids)
    want = min(view.config.num_standby_replicas, len(staying) - 1)
    for task in view.tasks:
        assert len(out.holders(task.id, "standby")) == (want if task.stateful else 0)
    assert all(not out.of(m).copies for m in view.member_ids if m not in staying)  # leaving: treated as gone
    assert all(not roles.warmup for _, roles in out.members)
    assert eager.assign(view) == out
    # a balanced assignment, reported back as the current one, is returned unchanged
    again = view.replace(
        members=tuple(
            Member(
                id=m.id,
                capacity=m.capacity,
                leaving=m.leaving,
                active=out.of(m.id).active,
                standby=out.of(m.id).standby,
                lags={t: 0 for t in out.of(m.id).active + out.of(m.id).standby},
            )
            for m in view.members
        ),
        previous_members=view.member_ids,
    )
    assert sticky.assign(again) == out


@settings(max_examples=150)
@given(view=small_views(), version=st.sampled_from((1, 2)))
def test_learner_version_rules(view, version):
    out = learner.make(version=version)(view)
    leaving = _leaving(view, version)
    for member in view.member_ids:
        mine = out.of(member)
        for task in mine.warmup:
            assert view.task(task).stateful
            assert out.actives_of(task) != (member,)
            if task not in view.member(member).warmup:  # a new learner
                assert member not in leaving
                if version == 1:
                    assert view.is_new(member) is True
        if member in leaving:
            assert not mine.warmup and not mine.standby
            assert set(mine.active) <= set(view.member(member).active) | {t for t, _ in view.member(member).lags}
    for task in view.stateful_task_ids:
        step = next(s for s in _active_steps(view, task, version) if s)
        assert out.actives_of(task)[0] in step
    for task in view.tasks:
        standbys = out.holders(task.id, "standby")
        assert len(standbys) <= (view.config.num_standby_replicas if task.stateful else 0)
        assert not set(standbys) & leaving


@settings(max_examples=100)
@given(view=small_views())
def test_learner_leaves_a_balanced_stable_group_alone(view):
    stateful = tuple(t for t in view.tasks if t.stateful)
    view = view.replace(
        tasks=stateful,
        members=tuple(Member(id=m.id, capacity=m.capacity, active=tuple(t for t in m.active if view.task(t).stateful)) for m in view.members),
    )
    stable = sticky.assign(view)
    again = view.replace(
        members=tuple(
            Member(id=m.id, capacity=m.capacity, active=stable.of(m.id).active, standby=stable.of(m.id).standby)
            for m in view.members
        ),
        previous_members=view.member_ids,
    )
    for version in (1, 2):
        out = learner.make(version=version)(again)
        assert all(not roles.warmup for _, roles in out.members)
        assert {m: roles.active for m, roles in out.members} == {m: roles.active for m, roles in stable.members}


@settings(max_examples=100)
@given(
    total=st.integers(0, 12),
    caps=st.dictionaries(st.sampled_from(("A", "B", "C", "D")), st.integers(1, 3), min_size=1),
    data=st.data(),
)
def test_capacity_quotas_are_within_one_and_keep_a_balanced_layout(total, caps, data):
    quotas = common.capacity_quotas(total, caps)
    assert sum(quotas.values()) == total
    assert all(quotas[i] * caps[j] <= (quotas[j] + 1) * caps[i] for i in caps for j in caps)
    current = data.draw(st.fixed_dictionaries({m: st.integers(0, 4) for m in caps}))
    balanced = all(current[i] * caps[j] <= (current[j] + 1) * caps[i] for i in caps for j in caps)
    if balanced:
        assert common.capacity_quotas(sum(current.values()), caps, current=current) == current
    assert Fraction(1, 2) == common.per_thread(1, 2)
