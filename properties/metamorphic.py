"""Metamorphic properties: what an assignor must do on related inputs, with no reference answer.

Each property runs the assignor on the input and on inputs derived from it, and compares the
answers; none needs to know the right answer. They are named data like the per-assignment
properties (:mod:`rebalproof.properties.catalogue`): a name, a one-line promise, the source
and a check ``check(assignor, view, *, samples, seed) -> Verdict``.

``renaming``
    Renaming instances, tasks within a subtopology, or subtopologies renames the answer, up
    to automorphism of the input (:func:`rebalproof.symmetry.check_equivariance`, which says
    why that is the sound comparison). Not a KIP promise but the premise of symmetry
    reduction: an assignor breaking ties by id fails it where the tied instances differ, and
    is then model-checked without reduction.
``reordering``
    The same input with its members, tasks, role lists, lags, ``previous_members`` and object
    keys listed in other orders gets the same answer (JSON lists in the contract are sets).
    Sent to the assignor as JSON, so it needs an assignor that takes JSON: a ``py:`` function
    (or a plain function of the input dict), or an ``exec:`` program, whose runner sends the
    object as given (:meth:`~rebalproof.model.assignors.external.ExecAssignor.call_json`). For
    an assignor that only takes the decoded view, order cannot reach it and the verdict is
    ``inconclusive`` saying so.
``idempotence``
    KIP-441 requirement 5 on the assignor's own answers. The answer ``A`` to ``x`` is **fed
    back**: the next input has the same members (leaving members that got nothing have left),
    each holding exactly what ``A`` gave it, every copy ``A`` gave caught up (lag 0: warmups and
    standbys have finished restoring), other reported lags as they were, and
    ``previous_members`` = the members of ``x``. When ``A`` asks no probing rebalance and the
    fed-back input meets the premise of ``fixpoint``
    (:func:`~rebalproof.properties.stability.fixpoint_premise`: valid, no extra
    copies, balanced, caught up, nobody leaving), the answer to it must be ``A`` unchanged
    with no probing rebalance. Otherwise the answer is fed back again, up to ``rounds``
    times (restores finishing at once), and the first answer that meets the premise is
    checked; if none does, the verdict is ``inconclusive`` (convergence itself is the
    explorer's ``converges``).
``lag-monotonicity``
    Making an instance more caught up on a task it got as active never takes that task away:
    for a sampled active copy ``(i, t)`` of the answer with a reported lag ``L > 0`` on
    stateful ``t``, the input with ``i``'s lag on ``t`` lowered (to 0 when ``L`` is within
    ``acceptable_recovery_lag``, else to a value drawn below ``L``) must again get ``t`` active
    on ``i``. Lowering a lag never lowers ``i``'s KIP-441 rank below anyone else's, so every
    rank-based assignor keeps it; within the recovery lag the rank does not change at all.

An :class:`~rebalproof.errors.AssignorError` (a crash, a hang, a malformed answer) is passed
on untouched: it is a finding about the assignor, reported by the caller as such.

Examples
--------
>>> from rebalproof.model.assignment import Assignment
>>> from rebalproof.model.codec import decode_input
>>> view = decode_input({"tasks": [{"id": "0_0", "stateful": False}, {"id": "0_1", "stateful": False}],
...                      "members": [{"id": "I1", "active": ["0_0"]}, {"id": "I2", "active": ["0_1"]}]})
>>> def swapper(view):  # hands every stateless task to the other member: never settles
...     other = {"I1": "I2", "I2": "I1"}
...     return Assignment.build({m.id: {"active": list(view.member(other[m.id]).active)} for m in view.members})
>>> verdict = idempotence(swapper, view, samples=1, seed=0)
>>> verdict.status.value
'violated'
>>> [p.name for p in METAMORPHIC]
['renaming', 'reordering', 'idempotence', 'lag-monotonicity']
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from rebalproof.errors import AssignorError, InputError
from rebalproof.model.assignment import ROLES, Assignment
from rebalproof.model.codec import encode_input
from rebalproof.model.names import id_key, sorted_ids
from rebalproof.model.view import Member, RebalanceInput
from rebalproof.properties.stability import fixpoint, fixpoint_premise
from rebalproof.properties.verdict import Status, Verdict
from rebalproof.symmetry import check_equivariance

__all__ = [
    "MetamorphicProperty",
    "METAMORPHIC",
    "metamorphic_named",
    "check_metamorphic",
    "renaming",
    "reordering",
    "idempotence",
    "lag_monotonicity",
    "feed_back",
    "reordered_json",
    "json_caller",
    "DEFAULT_ROUNDS",
]

Assignor = Callable[[RebalanceInput], Assignment]
DEFAULT_ROUNDS = 8
"""Answers :func:`idempotence` feeds back at most, looking for one that meets the fixpoint premise."""


# -- renaming ---------------------------------------------------------------------------

def renaming(assignor: Assignor, view: RebalanceInput, *, samples: int = 8, seed: int = 0) -> Verdict:
    """Renamed input, renamed answer (up to automorphism): :func:`rebalproof.symmetry.check_equivariance`."""
    return check_equivariance(assignor, view, samples=samples, seed=seed).to_verdict("renaming")


# -- reordering -------------------------------------------------------------------------

def json_caller(assignor) -> Callable[[dict, RebalanceInput], Assignment] | None:
    """A function sending an input *object as given* (any order) to ``assignor``, or None.

    Found, in order: a ``call_json(obj, view)`` method on the assignor or its ``backend``
    (an ``exec:`` runner that can send a given object); the ``function`` of a ``py:`` backend
    (:class:`~rebalproof.model.assignors.external.PyAssignor`), whose answer is judged as the
    runner judges it. None when the assignor only takes the decoded view.
    """
    for holder in (assignor, getattr(assignor, "backend", None)):
        if holder is None:
            continue
        call = getattr(holder, "call_json", None)
        if callable(call):
            return call
    backend = getattr(assignor, "backend", None)
    function = getattr(backend, "function", None)
    if callable(function):
        from rebalproof.model.assignors.external import judge_answer

        name = getattr(backend, "name", "assignor")

        def call(obj: dict, view: RebalanceInput) -> Assignment:
            try:
                answer = function(obj)
            except Exception as exc:
                raise AssignorError(
                    f"{name} crashed on the input below: {type(exc).__name__}: {exc}",
                    kind="crash", assignor=name, input_json=obj,
                ) from None
            return judge_answer(answer, view, assignor=name, input_json=obj)

        return call
    return None


def _shuffled_dict(obj: dict, rng: random.Random) -> dict:
    keys = list(obj)
    rng.shuffle(keys)
    return {k: obj[k] for k in keys}


def reordered_json(view: RebalanceInput, rng: random.Random) -> dict:
    """The input's JSON object with every list and every object's keys in a random order.

    Examples
    --------
    >>> from rebalproof.model.codec import decode_input
    >>> view = decode_input({"tasks": [{"id": "0_0"}, {"id": "0_1"}], "members": [{"id": "I1"}, {"id": "I2"}]})
    >>> decode_input(reordered_json(view, random.Random(1))) == view
    True
    """
    obj = encode_input(view)
    out = {}
    for key, value in _shuffled_dict(obj, rng).items():
        if key == "tasks":
            value = [_shuffled_dict(t, rng) for t in rng.sample(value, len(value))]
        elif key == "members":
            members = []
            for m in rng.sample(value, len(value)):
                m = dict(m)
                for role in ROLES:
                    m[role] = rng.sample(m[role], len(m[role]))
                m["lags"] = _shuffled_dict(m["lags"], rng)
                members.append(_shuffled_dict(m, rng))
            value = members
        elif key == "previous_members":
            value = rng.sample(value, len(value))
        elif key == "config":
            value = _shuffled_dict(value, rng)
        out[key] = value
    return out


def _same_answer(a: Assignment, b: Assignment) -> bool:
    return a.members == b.members and a.probing_rebalance == b.probing_rebalance


def reordering(assignor: Assignor, view: RebalanceInput, *, samples: int = 8, seed: int = 0) -> Verdict:
    """Listing members, tasks, roles, lags and keys in other orders gives the same answer."""
    call = json_caller(assignor)
    if call is None:
        if getattr(assignor, "kind", None) == "exec":
            why = "this exec: runner sends every input in one canonical order, so no other order can reach the program"
        else:
            why = "the assignor takes the decoded view, in which order is fixed, so no order can reach it; give a py: function to check this"
        return Verdict(property="reordering", status=Status.INCONCLUSIVE, message=why)
    rng = random.Random(f"{seed}:reordering")
    canonical = encode_input(view)
    answer = call(canonical, view)
    for sample in range(samples):
        obj = reordered_json(view, rng)
        other = call(obj, view)
        if not _same_answer(answer, other):
            return Verdict(
                property="reordering",
                status=Status.VIOLATED,
                message=(
                    f"the same input listed in another order (sample {sample + 1}, seed {seed}: members "
                    f"{', '.join(m['id'] for m in obj['members'])}; tasks {', '.join(t['id'] for t in obj['tasks'])}) "
                    f"gets another answer: {_layout(other)} instead of {_layout(answer)}"
                ),
                members=sorted_ids(m for m, a in answer.members if a != other.of(m)),
                measure={"samples": sample + 1, "input": obj},
            )
    return Verdict(
        property="reordering",
        status=Status.HOLDS,
        message=f"the same answer for {samples} other orders of the input (seed {seed})",
        measure={"samples": samples},
    )


# -- idempotence ------------------------------------------------------------------------

def feed_back(view: RebalanceInput, answer: Assignment) -> RebalanceInput:
    """The next rebalance's input once ``answer`` has taken effect and every restore has finished.

    Each member holds what ``answer`` gave it, every copy it holds is caught up (lag 0), other
    reported lags stay as they were; leaving members that got nothing have left;
    ``previous_members`` is the members of ``view``. An answer that is not valid as a holding
    (a task twice on one member) is an :class:`~rebalproof.errors.InputError`.
    """
    members = []
    for m in view.members:
        given = answer.of(m.id)
        if m.leaving and not given.copies:
            continue
        lags = dict(m.lags)
        for task_id in given.copies:
            if view.task(task_id).stateful:
                lags[task_id] = 0
        members.append(
            Member(id=m.id, capacity=m.capacity, leaving=m.leaving, active=given.active, standby=given.standby,
                   warmup=given.warmup, lags=lags)
        )
    return view.replace(members=tuple(members), previous_members=view.member_ids)


def idempotence(assignor: Assignor, view: RebalanceInput, *, samples: int = 8, seed: int = 0,
                rounds: int = DEFAULT_ROUNDS) -> Verdict:
    """A settled answer, fed back with its restores finished, comes back unchanged (KIP-441 requirement 5).

    ``samples`` and ``seed`` are accepted for a uniform signature; the check is deterministic.
    """
    current = view
    answer = assignor(current)
    why: tuple[str, ...] = ()
    for round_ in range(1, rounds + 1):
        try:
            nxt = feed_back(current, answer)
        except InputError as exc:
            return Verdict(
                property="idempotence",
                status=Status.INCONCLUSIVE,
                message=f"answer {round_} cannot be fed back ({exc}); check it with the oracle first",
                measure={"rounds": round_},
            )
        premise = fixpoint_premise(nxt)
        if answer.probing_rebalance:
            why = ("it asks for a probing rebalance",) + premise
        elif premise:
            why = premise
        else:
            again = assignor(nxt)
            verdict = fixpoint(nxt, again)
            if verdict.violated:
                return Verdict(
                    property="idempotence",
                    status=Status.VIOLATED,
                    message=(
                        f"answer {round_} is balanced, caught up and asks no probing rebalance, but fed back "
                        f"(restores finished) {verdict.message.split(', but ', 1)[-1]}"
                    ),
                    tasks=verdict.tasks,
                    members=verdict.members,
                    measure={"rounds": round_, "settled_input": encode_input(nxt)},
                )
            return Verdict(
                property="idempotence",
                status=Status.HOLDS,
                message=f"answer {round_} is settled and comes back unchanged when fed back",
                measure={"rounds": round_},
            )
        current, answer = nxt, assignor(nxt)
    return Verdict(
        property="idempotence",
        status=Status.INCONCLUSIVE,
        message=f"no answer in {rounds} rounds (restores finishing at once) was settled; the last: {'; '.join(why)}",
        measure={"rounds": rounds},
    )


# -- lag monotonicity -------------------------------------------------------------------

def _with_lag(view: RebalanceInput, member_id: str, task_id: str, lag: int) -> RebalanceInput:
    members = []
    for m in view.members:
        if m.id == member_id:
            lags = dict(m.lags)
            lags[task_id] = lag
            m = Member(id=m.id, capacity=m.capacity, leaving=m.leaving, active=m.active, standby=m.standby,
                       warmup=m.warmup, lags=lags)
        members.append(m)
    return view.replace(members=tuple(members))


def lag_monotonicity(assignor: Assignor, view: RebalanceInput, *, samples: int = 8, seed: int = 0) -> Verdict:
    """Lowering the lag of an instance on a task it got as active never takes that task away."""
    answer = assignor(view)
    candidates = []
    for member_id, given in answer.members:
        if not view.has_member(member_id):
            continue
        for task_id in given.active:
            lag = view.member(member_id).lag(task_id) if view.has_task(task_id) else None
            if lag and view.task(task_id).stateful:
                candidates.append((member_id, task_id, lag))
    if not candidates:
        return Verdict(
            property="lag-monotonicity",
            status=Status.INCONCLUSIVE,
            message="no stateful active of the answer went to an instance with a positive lag, so there is no lag to lower; "
            "try an input with lags",
        )
    candidates.sort(key=lambda c: (id_key(c[1]), id_key(c[0])))
    rng = random.Random(f"{seed}:lag-monotonicity")
    chosen = candidates if len(candidates) <= samples else rng.sample(candidates, samples)
    recovery = view.config.acceptable_recovery_lag
    for member_id, task_id, lag in chosen:
        lower = 0 if lag <= recovery else rng.randrange(0, lag)
        other = assignor(_with_lag(view, member_id, task_id, lower))
        holders = other.actives_of(task_id)
        if member_id not in holders:
            now = f"now active on {', '.join(sorted_ids(holders))}" if holders else "now active nowhere"
            return Verdict(
                property="lag-monotonicity",
                status=Status.VIOLATED,
                message=f"lowering {member_id}'s lag on {task_id} from {lag} to {lower} took {task_id} away from {member_id} ({now})",
                tasks=(task_id,),
                members=sorted_ids({member_id, *holders}),
                measure={"lag": lag, "lowered_to": lower},
            )
    return Verdict(
        property="lag-monotonicity",
        status=Status.HOLDS,
        message=f"{len(chosen)} of {len(candidates)} active copies with a lag kept their task when the lag was lowered (seed {seed})",
        measure={"checked": len(chosen), "candidates": len(candidates)},
    )


def _layout(answer: Assignment) -> str:
    rows = []
    for member_id, a in answer.members:
        roles = " ".join(f"{r} {','.join(getattr(a, r))}" for r in ROLES if getattr(a, r))
        rows.append(f"{member_id}: {roles or '-'}")
    return "; ".join(rows) + (" (probing rebalance)" if answer.probing_rebalance else "")


# -- the catalogue ----------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class MetamorphicProperty:
    """One metamorphic property as named data.

    Attributes
    ----------
    name : str
        Stable name used in reports.
    promise : str
        What it promises, in one line.
    check : callable
        ``check(assignor, view, *, samples, seed) -> Verdict``.
    source : str
        Where the promise comes from.
    """

    name: str
    promise: str
    check: Callable[..., Verdict]
    source: str = ""


METAMORPHIC: tuple[MetamorphicProperty, ...] = (
    MetamorphicProperty(
        name="renaming",
        promise="renaming instances, tasks or subtopologies in the input renames the answer (up to automorphism)",
        check=renaming,
        source="docs/DESIGN.md Exploration: symmetry reduction is sound only for equivariant assignors",
    ),
    MetamorphicProperty(
        name="reordering",
        promise="members, tasks, roles and lags listed in another order get the same answer",
        check=reordering,
        source="docs/DESIGN.md Contracts: the input's lists are sets",
    ),
    MetamorphicProperty(
        name="idempotence",
        promise="an answer that is balanced, caught up and asks no probing rebalance, fed back with restores finished, comes back unchanged",
        check=idempotence,
        source="KIP-441 Assignment Algorithm 5",
    ),
    MetamorphicProperty(
        name="lag-monotonicity",
        promise="making an instance more caught up on a task it got as active never takes that task away",
        check=lag_monotonicity,
        source="KIP-441 Assignment Algorithm 1, Computing the most-caught-up instances",
    ),
)


def metamorphic_named(name: str) -> MetamorphicProperty:
    """The metamorphic property called ``name``; an :class:`InputError` listing the names otherwise."""
    for prop in METAMORPHIC:
        if prop.name == name:
            return prop
    raise InputError(f"unknown metamorphic property {name!r}; they are {', '.join(p.name for p in METAMORPHIC)}")


def check_metamorphic(assignor: Assignor, view: RebalanceInput, *, seed: int = 0, samples: int = 8,
                      names: tuple[str, ...] | None = None) -> tuple[Verdict, ...]:
    """One verdict per metamorphic property (or those ``names``), in catalogue order.

    Parameters
    ----------
    assignor : callable
        The leader's view to an :class:`Assignment` (a resolved spec, a built-in, a function).
        It is called a few dozen times; make it cheap or memoised.
    view : RebalanceInput
        The input the properties start from.
    seed : int, keyword-only
        The only source of randomness (each property draws from its own stream of it).
    samples : int, keyword-only
        Renamings, reorderings and lowered lags to try per property.
    names : tuple of str, optional
        Check only these properties.
    """
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise InputError(f"samples must be a whole number of at least 1, got {samples!r}")
    props = METAMORPHIC if names is None else tuple(metamorphic_named(n) for n in names)
    return tuple(p.check(assignor, view, samples=samples, seed=seed) for p in props)
