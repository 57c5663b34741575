"""Hypothesis strategies for rebalance inputs and answers, for users' property-based tests.

:func:`rebalance_inputs` draws *realistic* groups, the leader's view of one rebalance after
some history: members with capacities; a previous assignment that is mostly valid (actives
unique, standbys on other members, sometimes a few warmups); lags consistent with the roles
(actives 0 or unreported, standbys mostly caught up, some copies lagging beyond
``acceptable_recovery_lag``, most members without a copy having no state); and the events
that make a rebalance interesting — new members (not in ``previous_members``), members that
crashed or left (in ``previous_members``, gone from the group, their tasks unowned), members
marked ``leaving`` (KIP-429 v2), and lost leader memory (``previous_members`` absent).
Examples shrink towards a settled group: a balanced, caught-up layout, no event.

:func:`assignments` draws arbitrary, possibly invalid answers to one input: what an
assignor under test might say.

Every argument is keyword-only and checked when the strategy is made; a bad one raises
:class:`hypothesis.errors.InvalidArgument` saying how to fix it.

Examples
--------
>>> from hypothesis import given, settings
>>> from rebalproof.oracle import check
>>> @settings(max_examples=20, database=None)
... @given(rebalance_inputs(max_members=3, max_subtopologies=2))
... def test_round_robin_keeps_one_active(view):
...     members = [m.id for m in view.members]
...     answer = {"assignment": {m: {"active": [t.id for i, t in enumerate(view.tasks) if i % len(members) == k]}
...                              for k, m in enumerate(members)}}
...     assert check(view, answer).verdict("one-active").holds
>>> test_round_robin_keeps_one_active()
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from rebalproof.model.assignment import Assignment, MemberAssignment
from rebalproof.model.names import subtopology_of
from rebalproof.model.view import Config, Member, RebalanceInput, Task

__all__ = ["configs", "tasks_lists", "rebalance_inputs", "assignments", "LAYOUTS"]

LAYOUTS = ("balanced", "shuffled", "empty")
"""How the previous assignment was laid out: dealt evenly, placed at random, or nothing yet."""


# -- argument checks ---------------------------------------------------------------------------
def _whole(name: str, value, *, at_least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{name}={value!r} must be a whole number; pass e.g. {name}={max(at_least, 1)}")
    if value < at_least:
        raise InvalidArgument(f"{name}={value} must be at least {at_least}; pass {name}={at_least} or more")
    return value


def _ordered(low_name: str, low: int, high_name: str, high: int) -> None:
    if low > high:
        raise InvalidArgument(f"{low_name}={low} is more than {high_name}={high}; pass {high_name}>={low} or lower {low_name}")


def _flag(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgument(f"{name}={value!r} must be True or False")
    return value


def _rarely(draw) -> bool:
    """True about one time in four; shrinks to False (no event)."""
    return draw(st.integers(0, 3)) == 3


# -- configs and tasks -------------------------------------------------------------------------
def configs(
    *,
    max_standby_replicas: int = 2,
    min_warmup_replicas: int = 1,
    max_warmup_replicas: int = 3,
    acceptable_recovery_lags=(10000, 100, 0),
) -> st.SearchStrategy[Config]:
    """Assignment configs of KIP-441.

    Parameters
    ----------
    max_standby_replicas : int, optional
        ``num_standby_replicas`` is drawn from 0 to this.
    min_warmup_replicas, max_warmup_replicas : int, optional
        Bounds of ``max_warmup_replicas`` (KIP-441's minimum is 1; pass 0 to test below it).
    acceptable_recovery_lags : sequence of int, optional
        The values ``acceptable_recovery_lag`` is drawn from, simplest first.
    """
    _whole("max_standby_replicas", max_standby_replicas, at_least=0)
    _whole("min_warmup_replicas", min_warmup_replicas, at_least=0)
    _whole("max_warmup_replicas", max_warmup_replicas, at_least=0)
    _ordered("min_warmup_replicas", min_warmup_replicas, "max_warmup_replicas", max_warmup_replicas)
    lags = tuple(acceptable_recovery_lags) if not isinstance(acceptable_recovery_lags, (str, bytes)) else ()
    if not lags:
        raise InvalidArgument("acceptable_recovery_lags must be a non-empty sequence of whole numbers, e.g. (10000, 0)")
    for lag in lags:
        _whole("each of acceptable_recovery_lags", lag, at_least=0)
    return st.builds(
        Config,
        num_standby_replicas=st.integers(0, max_standby_replicas),
        acceptable_recovery_lag=st.sampled_from(lags),
        max_warmup_replicas=st.integers(min_warmup_replicas, max_warmup_replicas),
    )


def tasks_lists(
    *,
    min_subtopologies: int = 1,
    max_subtopologies: int = 3,
    max_partitions: int = 4,
    stateless: bool = True,
) -> st.SearchStrategy[tuple[Task, ...]]:
    """The tasks of a topology: subtopologies ``0..S-1`` with ``1..max_partitions`` partitions each.

    A subtopology is stateful or stateless as a whole (it either has a store or not); with
    ``stateless=False`` every task is stateful. Ids are ``S_P``.
    """
    _whole("min_subtopologies", min_subtopologies, at_least=0)
    _whole("max_subtopologies", max_subtopologies, at_least=0)
    _whole("max_partitions", max_partitions, at_least=1)
    _ordered("min_subtopologies", min_subtopologies, "max_subtopologies", max_subtopologies)
    _flag("stateless", stateless)
    kinds = st.booleans().map(lambda b: not b) if stateless else st.just(True)  # shrinks to stateful
    return _drawn_tasks(min_subtopologies, max_subtopologies, max_partitions, kinds)


# The composites are defined once, here, and given what they draw from as arguments: hypothesis
# reads a function's source each time it is wrapped by ``st.composite`` (about 2 ms), so one
# defined inside ``assignments`` cost that on every view a test drew answers for.
@st.composite
def _drawn_tasks(draw, min_subtopologies, max_subtopologies, max_partitions, kinds):
    shape = draw(st.lists(st.tuples(st.integers(1, max_partitions), kinds), min_size=min_subtopologies, max_size=max_subtopologies))
    return tuple(Task(id=f"{s}_{p}", stateful=stateful) for s, (parts, stateful) in enumerate(shape) for p in range(parts))


# -- groups ------------------------------------------------------------------------------------
def _lag_choices(acceptable: int) -> tuple[int, ...]:
    """Lags simplest first: caught up (0, within, at the bound), then behind (just, far)."""
    return (0, acceptable // 2, acceptable, acceptable + 1, 10 * acceptable + 1000)


def _deal(task_ids, members, capacities) -> dict[str, str]:
    """Actives dealt evenly: each to the member with least (total+1)/capacity, then least in its subtopology."""
    total = {m: 0 for m in members}
    per_sub: dict[tuple[str, str], int] = {}
    out = {}
    for task_id in task_ids:
        sub = subtopology_of(task_id)
        best = min(
            members,
            key=lambda m: (
                Fraction(total[m] + 1, capacities[m]),
                Fraction(per_sub.get((sub, m), 0) + 1, capacities[m]),
                members.index(m),
            ),
        )
        out[task_id] = best
        total[best] += 1
        per_sub[(sub, best)] = per_sub.get((sub, best), 0) + 1
    return out


def rebalance_inputs(
    *,
    min_members: int = 1,
    max_members: int = 5,
    min_subtopologies: int = 1,
    max_subtopologies: int = 3,
    max_partitions: int = 4,
    max_capacity: int = 3,
    stateless: bool = True,
    config=None,
    leaving: bool = True,
    memory_loss: bool = True,
    departures: bool = True,
) -> st.SearchStrategy[RebalanceInput]:
    """The leader's view of one rebalance in a realistic group (see the module doc).

    Parameters
    ----------
    min_members, max_members : int, optional
        Bounds of the number of members in the group (the input's ``members``); at least 1,
        the leader.
    min_subtopologies, max_subtopologies, max_partitions, stateless
        Passed to :func:`tasks_lists`.
    max_capacity : int, optional
        Capacities (stream threads) are drawn from 1 to this; most groups have equal ones.
    config : Config or strategy of Config, optional
        The configs; by default drawn with :func:`configs`.
    leaving, memory_loss, departures : bool, optional
        Whether members may be marked leaving, the leader's memory (``previous_members``) may be
        lost, and members of the previous round may be gone.

    Returns
    -------
    SearchStrategy of RebalanceInput
        Encode with :func:`rebalproof.model.codec.encode_input` for an assignor taking JSON.
    """
    _whole("min_members", min_members, at_least=1)
    _whole("max_members", max_members, at_least=1)
    _ordered("min_members", min_members, "max_members", max_members)
    _whole("max_capacity", max_capacity, at_least=1)
    for name, value in (("leaving", leaving), ("memory_loss", memory_loss), ("departures", departures)):
        _flag(name, value)
    task_strategy = tasks_lists(
        min_subtopologies=min_subtopologies, max_subtopologies=max_subtopologies, max_partitions=max_partitions, stateless=stateless
    )
    if config is None:
        config_strategy = configs()
    elif isinstance(config, Config):
        config_strategy = st.just(config)
    elif isinstance(config, st.SearchStrategy):
        config_strategy = config
    else:
        raise InvalidArgument(f"config={config!r} must be a Config, a strategy of Config (e.g. configs()), or None for the default")

    return _drawn_input(config_strategy, task_strategy, min_members, max_members, max_capacity, leaving, memory_loss, departures)


@st.composite
def _drawn_input(draw, config_strategy, task_strategy, min_members, max_members, max_capacity, leaving, memory_loss, departures):
    cfg = draw(config_strategy)
    if not isinstance(cfg, Config):
        raise InvalidArgument(f"the config strategy drew {cfg!r}, not a Config; use rebalproof.strategies.configs()")
    tasks = draw(task_strategy)
    task_ids = [t.id for t in tasks]
    stateful = [t.id for t in tasks if t.stateful]
    size = draw(st.integers(min_members, max_members))
    new_count = draw(st.integers(1, size)) if _rarely(draw) else 0
    gone_count = draw(st.integers(1, 2)) if departures and _rarely(draw) else 0
    old_count = size - new_count + gone_count
    old = [f"I{i}" for i in range(1, old_count + 1)]
    new = [f"I{i}" for i in range(old_count + 1, old_count + new_count + 1)]
    gone = set(draw(st.lists(st.sampled_from(old), min_size=gone_count, max_size=gone_count, unique=True))) if gone_count else set()
    if _rarely(draw):
        capacities = {m: draw(st.integers(1, max_capacity)) for m in old + new}
    else:
        same = draw(st.integers(1, max_capacity))
        capacities = {m: same for m in old + new}

    # the previous round: actives, standbys, warmups over the old members (the gone ones included)
    layout = draw(st.sampled_from(LAYOUTS)) if old else "empty"
    holds: dict[str, dict[str, list[str]]] = {m: {"active": [], "standby": [], "warmup": []} for m in old + new}
    if layout != "empty":
        order = list(draw(st.permutations(old)))
        if layout == "balanced":
            actives = _deal(task_ids, order, capacities)
        else:
            actives = {t: draw(st.sampled_from(order)) for t in task_ids}
        for t, m in actives.items():
            holds[m]["active"].append(t)
        want = min(cfg.num_standby_replicas, len(old) - 1)
        short = layout == "shuffled" and _rarely(draw)  # some standbys never placed
        for t in stateful:
            ring = order[order.index(actives[t]) + 1 :] + order[: order.index(actives[t])]
            for m in ring[: want - 1 if short and want else want]:
                holds[m]["standby"].append(t)
        if _rarely(draw) and cfg.max_warmup_replicas:
            free = [(t, m) for t in stateful for m in old if all(t not in holds[m][r] for r in holds[m])]
            if free:
                picked = draw(st.lists(st.sampled_from(free), max_size=cfg.max_warmup_replicas, unique=True))
                for t, m in picked:
                    holds[m]["warmup"].append(t)

    # lags consistent with the roles
    choices = _lag_choices(cfg.acceptable_recovery_lag)
    caught_up, behind = choices[:3], choices[3:]
    members = []
    present = [m for m in old if m not in gone] + new
    marked = set()
    if leaving and len(present) > 1 and _rarely(draw):
        candidates = [m for m in present if m in old] or present
        marked = set(draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=min(2, len(present) - 1), unique=True)))
    for m in present:
        lags = {}
        leftover = _rarely(draw)  # state kept on disk from an earlier round (or a host swap)
        for t in stateful:
            if t in holds[m]["active"]:
                lag = draw(st.sampled_from((0, None)))
            elif t in holds[m]["standby"]:
                lag = draw(st.sampled_from(caught_up + behind[:1])) if not _rarely(draw) else draw(st.sampled_from(behind))
            elif t in holds[m]["warmup"]:
                lag = draw(st.sampled_from(caught_up + behind))
            elif leftover and draw(st.booleans()):
                lag = draw(st.sampled_from(behind + caught_up))
            else:
                lag = None
            if lag is not None:
                lags[t] = lag
        members.append(
            Member(
                id=m,
                capacity=capacities[m],
                leaving=m in marked,
                active=tuple(holds[m]["active"]),
                standby=tuple(holds[m]["standby"]),
                warmup=tuple(holds[m]["warmup"]),
                lags=lags,
            )
        )
    previous = None if memory_loss and _rarely(draw) else tuple(old)
    return RebalanceInput(config=cfg, tasks=tasks, members=tuple(members), previous_members=previous)


# -- answers -----------------------------------------------------------------------------------
def assignments(view: RebalanceInput, *, probing_rebalance=None) -> st.SearchStrategy[Assignment]:
    """Answers to ``view`` an assignor might give, valid or not.

    Half are near-valid (one active per task on a drawn member, standbys elsewhere) with
    sometimes a mistake added; the others are arbitrary lists of the input's tasks per member
    (duplicates, missing and doubled actives included). Every input member appears and only
    input ids are used, so the oracle's id checks pass and the properties decide.

    Parameters
    ----------
    view : RebalanceInput
        The input the answers are for.
    probing_rebalance : bool, optional
        Fix the answers' ``probing_rebalance``; drawn when None.
    """
    if not isinstance(view, RebalanceInput):
        raise InvalidArgument(f"view={view!r} must be a RebalanceInput; draw one with rebalance_inputs() or decode JSON with rebalproof.model.codec.decode_input")
    if probing_rebalance is not None:
        _flag("probing_rebalance", probing_rebalance)
    members = list(view.member_ids)
    task_ids = list(view.task_ids)
    probing = st.booleans() if probing_rebalance is None else st.just(probing_rebalance)
    if not members:
        return probing.map(lambda p: Assignment(probing_rebalance=p))
    if not task_ids:
        return probing.map(lambda p: Assignment(members={m: MemberAssignment() for m in members}, probing_rebalance=p))

    return st.one_of(_near_valid(view, members, task_ids, probing), _arbitrary(members, task_ids, probing))


@st.composite
def _near_valid(draw, view, members, task_ids, probing):
    holds = {m: {"active": [], "standby": [], "warmup": []} for m in members}
    for t in task_ids:
        holds[draw(st.sampled_from(members))]["active"].append(t)
    for t in view.stateful_task_ids:
        others = [m for m in members if t not in holds[m]["active"]]
        for m in draw(st.lists(st.sampled_from(others), unique=True, max_size=view.config.num_standby_replicas + 1)) if others else ():
            holds[m][draw(st.sampled_from(("standby", "standby", "warmup")))].append(t)
    if _rarely(draw):
        m, role, t = draw(st.sampled_from(members)), draw(st.sampled_from(("active", "standby", "warmup"))), draw(st.sampled_from(task_ids))
        holds[m][role].append(t)
    return Assignment.build(holds, probing_rebalance=draw(probing))


@st.composite
def _arbitrary(draw, members, task_ids, probing):
    ids = st.lists(st.sampled_from(task_ids), max_size=len(task_ids) + 1)
    holds = {m: {"active": draw(ids), "standby": draw(ids), "warmup": draw(ids)} for m in members}
    return Assignment.build(holds, probing_rebalance=draw(probing))
