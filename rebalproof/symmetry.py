"""Renaming instances and tasks, and the sampled equivariance check of an assignor.

A **renaming** maps member ids to member ids and task ids to task ids, one to one, such that
tasks of one subtopology go to tasks of one subtopology (and different subtopologies stay
different): it renames instances, tasks within a subtopology, and subtopologies. Applied to a
:class:`RebalanceInput` it renames every id it holds (members, their roles and lags, the
leader's memory ``previous_members``); applied to an :class:`Assignment` it renames members
and tasks. Capacities, lags, configs and ``stateful`` flags travel with the ids.

An assignor ``f`` is **equivariant** on an input ``x`` when renaming the input renames the
answer: ``f(r(x))`` equals ``r(f(x))``. Symmetry reduction in the explorer (docs/DESIGN.md
"Exploration") is sound only for such assignors.

Renamings may be restricted to **classes** of member ids (``classes``: member id -> class, e.g.
its capacity in the group model, where capacity belongs to the id): then an instance is only
renamed to one of its own class, which is what symmetry reduction of a model with mixed
capacities needs (an assignor that breaks ties by id between instances of different capacity
is still equivariant within the classes).

Equivalence is taken **up to automorphism**, which is the sound comparison: if ``x`` is
itself symmetric (two fresh instances that nothing tells apart), a deterministic assignor must
pick one of them, and any pick is as good as the other. So the check asks whether the two
pairs ``(r(x), f(r(x)))`` and ``(r(x), r(f(x)))`` are the same up to a renaming that maps
``r(x)`` to itself, i.e. whether ``(r(x), f(r(x)))`` and ``(x, f(x))`` are isomorphic as
(input, answer) pairs. That is exactly what symmetry reduction needs (the successor of a state
and of its renamed image must lie in one orbit). It follows that:

- an assignor that breaks ties by id (or by position in the sorted input) only where the
  tied candidates are interchangeable passes;
- an assignor whose answer depends on names where the candidates differ in any other respect
  (a hash of the id, or ties by id between instances of different capacity) is reported,
  with the renaming that breaks it and both answers. Kafka's own assignor, which breaks every
  tie by id, is in general *not* equivariant, and the check says so.

The answers are first compared exactly (the usual case, cheap); only when they differ is the
isomorphism of the two pairs decided, on a labelled graph of the pair (members, tasks,
subtopologies; member-task edges labelled with input role, lag and answer roles) with
networkx's VF2 matcher. Renamings that map the input to itself are counted but prove nothing
(any answer passes on them); if every sampled renaming is one, the result is inconclusive.

Examples
--------
>>> from rebalproof.model.codec import decode_input
>>> view = decode_input({"tasks": [{"id": "0_0"}, {"id": "0_1"}],
...                      "members": [{"id": "I1", "active": ["0_0"]}, {"id": "I2"}]})
>>> swap = Renaming(members={"I1": "I2", "I2": "I1"})
>>> rename_input(view, swap).member("I2").active
('0_0',)
>>> swap.describe()
'I1->I2, I2->I1'
>>> def first_by_id(view):  # everything to the first member by id: depends on names
...     return Assignment.build({m: {"active": list(view.task_ids) if m == view.member_ids[0] else []}
...                              for m in view.member_ids})
>>> result = check_equivariance(first_by_id, view, samples=4, seed=0)
>>> result.status.value, result.renaming.describe()
('violated', 'I1->I2, I2->I1')
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping

import typing

if typing.TYPE_CHECKING:  # networkx (12 MiB) is imported where a graph is matched, not by every command
    import networkx as nx

from rebalproof.errors import InputError
from rebalproof.model.assignment import ROLES, Assignment, MemberAssignment
from rebalproof.model.codec import check_ids
from rebalproof.model.names import id_key, sorted_ids, subtopology_of
from rebalproof.model.view import Member, RebalanceInput, Task
from rebalproof.properties.verdict import Status, Verdict

__all__ = [
    "Renaming",
    "by_subtopology",
    "check_renaming",
    "rename_input",
    "rename_assignment",
    "random_renaming",
    "sample_renamings",
    "same_up_to_automorphism",
    "same_answers_up_to_automorphism",
    "EquivarianceResult",
    "check_equivariance",
]


def _pairs(mapping) -> tuple[tuple[str, str], ...]:
    items = mapping.items() if isinstance(mapping, Mapping) else mapping
    return tuple(sorted(((a, b) for a, b in items if a != b), key=lambda p: id_key(p[0])))


@dataclass(frozen=True, kw_only=True, slots=True)
class Renaming:
    """A renaming of member ids and task ids; ids it does not mention keep their name.

    Only the ids that move are stored (sorted), so equal renamings are equal values.
    """

    members: tuple[tuple[str, str], ...] = ()
    tasks: tuple[tuple[str, str], ...] = ()
    _m: dict = field(init=False, repr=False, compare=False, hash=False)
    _t: dict = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self):
        object.__setattr__(self, "members", _pairs(self.members))
        object.__setattr__(self, "tasks", _pairs(self.tasks))
        object.__setattr__(self, "_m", dict(self.members))
        object.__setattr__(self, "_t", dict(self.tasks))

    def member(self, member_id: str) -> str:
        """The new name of ``member_id``."""
        return self._m.get(member_id, member_id)

    def task(self, task_id: str) -> str:
        """The new name of ``task_id``."""
        return self._t.get(task_id, task_id)

    @property
    def is_identity(self) -> bool:
        return not self.members and not self.tasks

    @property
    def size(self) -> int:
        """How many ids it moves (smaller renamings read better in a report)."""
        return len(self.members) + len(self.tasks)

    def inverse(self) -> "Renaming":
        return Renaming(members={b: a for a, b in self.members}, tasks={b: a for a, b in self.tasks})

    def then(self, other: "Renaming") -> "Renaming":
        """This renaming followed by ``other``."""
        members = {a: other.member(self.member(a)) for a in set(self._m) | set(other._m)}
        tasks = {a: other.task(self.task(a)) for a in set(self._t) | set(other._t)}
        return Renaming(members=members, tasks=tasks)

    def describe(self) -> str:
        """``I1->I2, I2->I1; 0_0->0_1, 0_1->0_0`` (``identity`` when nothing moves)."""
        parts = [", ".join(f"{a}->{b}" for a, b in pairs) for pairs in (self.members, self.tasks) if pairs]
        return "; ".join(parts) or "identity"

    def to_json(self) -> dict:
        return {"members": dict(self.members), "tasks": dict(self.tasks)}


def _ids_of(view: RebalanceInput) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every member id the view names (members and the leader's memory) and every task id."""
    members = set(view.member_ids) | set(view.previous_members or ())
    return sorted_ids(members), view.task_ids


def check_renaming(view: RebalanceInput, renaming: Renaming) -> None:
    """Raise :class:`InputError` unless ``renaming`` is one to one on the view's ids and keeps subtopologies together."""
    member_ids, task_ids = _ids_of(view)
    for kind, ids, rename in (("member", member_ids, renaming.member), ("task", task_ids, renaming.task)):
        images: dict[str, str] = {}
        for old in ids:
            new = rename(old)
            if not isinstance(new, str) or not new:
                raise InputError(f"renames {kind} '{old}' to {new!r}; give a non-empty id", where="renaming")
            if new in images:
                raise InputError(
                    f"renames {kind}s '{images[new]}' and '{old}' both to '{new}'; a renaming is one to one",
                    where="renaming",
                )
            images[new] = old
    subs: dict[str, str] = {}
    for task_id in task_ids:
        old_sub, new_sub = subtopology_of(task_id), subtopology_of(renaming.task(task_id))
        if subs.setdefault(old_sub, new_sub) != new_sub:
            raise InputError(
                f"sends tasks of subtopology '{old_sub}' to subtopologies '{subs[old_sub]}' and '{new_sub}'; "
                "tasks of one subtopology must stay together",
                where="renaming",
            )
    if len(set(subs.values())) != len(subs):
        raise InputError("sends two subtopologies to one; rename subtopologies one to one", where="renaming")


def rename_input(view: RebalanceInput, renaming: Renaming) -> RebalanceInput:
    """The input with every id renamed (validated: see :func:`check_renaming`)."""
    check_renaming(view, renaming)
    t = renaming.task
    tasks = tuple(Task(id=t(task.id), stateful=task.stateful) for task in view.tasks)
    members = tuple(
        Member(
            id=renaming.member(m.id),
            capacity=m.capacity,
            leaving=m.leaving,
            active=tuple(map(t, m.active)),
            standby=tuple(map(t, m.standby)),
            warmup=tuple(map(t, m.warmup)),
            lags=tuple((t(task_id), lag) for task_id, lag in m.lags),
        )
        for m in view.members
    )
    previous = None if view.previous_members is None else tuple(map(renaming.member, view.previous_members))
    return RebalanceInput(config=view.config, tasks=tasks, members=members, previous_members=previous)


def rename_assignment(assignment: Assignment, renaming: Renaming) -> Assignment:
    """The answer with every member and task renamed (duplicates kept, as in the answer)."""
    return Assignment(
        members={
            renaming.member(m): MemberAssignment(**{r: tuple(map(renaming.task, getattr(a, r))) for r in ROLES})
            for m, a in assignment.members
        },
        probing_rebalance=assignment.probing_rebalance,
    )


# -- sampling ---------------------------------------------------------------------------

def by_subtopology(task_ids) -> dict[str, list[str]]:
    """Task ids grouped by subtopology, both in the order given (renamings keep these groups).

    >>> by_subtopology(["0_0", "1_0", "0_1"])
    {'0': ['0_0', '0_1'], '1': ['1_0']}
    """
    subs: dict[str, list[str]] = {}
    for task_id in task_ids:
        subs.setdefault(subtopology_of(task_id), []).append(task_id)
    return subs


def _tasks_by_sub(view: RebalanceInput) -> dict[str, list[str]]:
    return by_subtopology(view.task_ids)


def _member_classes(view: RebalanceInput, classes: Mapping | None) -> list[list[str]]:
    """The view's member ids grouped by class (one group without ``classes``), in id order."""
    members, _ = _ids_of(view)
    if not classes:
        return [list(members)]
    groups: dict = {}
    for m in members:
        groups.setdefault(classes.get(m), []).append(m)
    return list(groups.values())


def _member_swap(view, rng, classes=None) -> Renaming | None:
    groups = [g for g in _member_classes(view, classes) if len(g) >= 2]
    if not groups:
        return None
    group = groups[0] if len(groups) == 1 else rng.choice(groups)
    a, b = rng.sample(group, 2)
    return Renaming(members={a: b, b: a})


def _task_swap(view, rng, classes=None) -> Renaming | None:
    subs = [ts for ts in _tasks_by_sub(view).values() if len(ts) >= 2]
    if not subs:
        return None
    a, b = rng.sample(rng.choice(subs), 2)
    return Renaming(tasks={a: b, b: a})


def _sub_swap(view, rng, classes=None) -> Renaming | None:
    subs = _tasks_by_sub(view)
    sizes: dict[int, list[str]] = {}
    for sub in sorted_ids(subs):
        sizes.setdefault(len(subs[sub]), []).append(sub)
    groups = [g for g in sizes.values() if len(g) >= 2]
    if not groups:
        return None
    s1, s2 = rng.sample(rng.choice(groups), 2)
    tasks = dict(zip(subs[s1], subs[s2]))
    tasks.update(zip(subs[s2], subs[s1]))
    return Renaming(tasks=tasks)


def random_renaming(view: RebalanceInput, rng: random.Random, classes: Mapping | None = None) -> Renaming:
    """A uniformly random permutation of the view's member ids (within each of ``classes``), of
    its subtopologies of equal size and of the tasks within each subtopology (ids stay within the
    view's own ids)."""
    member_map: dict[str, str] = {}
    for group in _member_classes(view, classes):
        shuffled = list(group)
        rng.shuffle(shuffled)
        member_map.update(zip(group, shuffled))
    subs = _tasks_by_sub(view)
    sizes: dict[int, list[str]] = {}
    for sub in sorted_ids(subs):
        sizes.setdefault(len(subs[sub]), []).append(sub)
    tasks: dict[str, str] = {}
    for group in sizes.values():
        targets = list(group)
        rng.shuffle(targets)
        for source, target in zip(group, targets):
            images = list(subs[target])
            rng.shuffle(images)
            tasks.update(zip(subs[source], images))
    return Renaming(members=member_map, tasks=tasks)


_KINDS: tuple[Callable, ...] = (_member_swap, _task_swap, _sub_swap, random_renaming)


def sample_renamings(view: RebalanceInput, *, samples: int, seed: int, classes: Mapping | None = None) -> Iterator[Renaming]:
    """``samples`` renamings of the view, drawn from ``seed`` only (members renamed within ``classes``).

    They cycle through four kinds so that each kind of symmetry is tried early: a swap of
    two instances, a swap of two tasks of one subtopology, a swap of two subtopologies of
    equal size, and a random permutation of all of them. Kinds the view has no room for are
    skipped; identity renamings are never drawn.
    """
    rng = random.Random(seed)
    drawn = 0
    misses = 0
    while drawn < samples and misses < 4 * len(_KINDS):
        kind = _KINDS[(drawn + misses) % len(_KINDS)]
        renaming = kind(view, rng, classes)
        if renaming is None or renaming.is_identity:
            misses += 1
            continue
        drawn += 1
        yield renaming


# -- comparison up to automorphism ------------------------------------------------------

def _pair_graph(view: RebalanceInput, answer: Assignment) -> nx.Graph:
    """The (input, answer) pair as a labelled graph whose isomorphisms are exactly renamings."""
    import networkx as nx

    graph = nx.Graph()
    ghosts = len(set(view.previous_members or ()) - set(view.member_ids))
    config = (view.config.num_standby_replicas, view.config.acceptable_recovery_lag, view.config.max_warmup_replicas)
    graph.add_node(("cfg",), label=("cfg", config, view.previous_members is None, ghosts, answer.probing_rebalance))
    for task in view.tasks:
        graph.add_node(("s", task.subtopology), label=("s",))
        graph.add_node(("t", task.id), label=("t", task.stateful))
        graph.add_edge(("t", task.id), ("s", task.subtopology), label=("in",))
    for m in view.members:
        graph.add_node(("m", m.id), label=("m", m.capacity, m.leaving, view.is_new(m.id)))
        given = answer.of(m.id)
        for task_id in view.task_ids:
            held = next((r for r in ROLES if task_id in getattr(m, r)), "")
            lag = m.lag(task_id)
            out = tuple(sorted(r for r in ROLES for t in getattr(given, r) if t == task_id))
            if held or lag is not None or out:
                graph.add_edge(("m", m.id), ("t", task_id), label=("mt", held, lag, out))
    return graph


def same_up_to_automorphism(view: RebalanceInput, a: Assignment, b: Assignment) -> bool:
    """True when some renaming that maps ``view`` to itself maps answer ``a`` to answer ``b``.

    Both answers must name only the view's ids (see :func:`rebalproof.model.codec.check_ids`).

    Examples
    --------
    >>> from rebalproof.model.codec import decode_input
    >>> view = decode_input({"tasks": [{"id": "0_0"}], "members": [{"id": "I1"}, {"id": "I2"}]})
    >>> to = lambda m: Assignment.build({"I1": {}, "I2": {}} | {m: {"active": ["0_0"]}})
    >>> same_up_to_automorphism(view, to("I1"), to("I2"))  # I1 and I2 are interchangeable
    True
    >>> view = decode_input({"tasks": [{"id": "0_0"}], "members": [{"id": "I1", "capacity": 2}, {"id": "I2"}]})
    >>> same_up_to_automorphism(view, to("I1"), to("I2"))
    False
    """
    if a.same_layout(b) and a.probing_rebalance == b.probing_rebalance:
        return True
    g1, g2 = _pair_graph(view, a), _pair_graph(view, b)
    from networkx.algorithms.isomorphism import GraphMatcher

    match = GraphMatcher(g1, g2, node_match=_same_label, edge_match=_same_label)
    return match.is_isomorphic()


def same_answers_up_to_automorphism(view: RebalanceInput, a, b) -> bool:
    """For a nondeterministic assignor: the answer sets ``a`` and ``b`` (sequences of
    :class:`Assignment`) hold the same answers up to automorphism of ``view``.

    Being the same up to automorphism is an equivalence (the automorphisms form a group), so
    the sets match when every answer of each has an equivalent one in the other.
    """

    def covered(xs, ys) -> bool:
        return all(any(same_up_to_automorphism(view, x, y) for y in ys) for x in xs)

    return covered(a, b) and covered(b, a)


def _same_label(x: dict, y: dict) -> bool:
    return x["label"] == y["label"]


# -- the check --------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class EquivarianceResult:
    """Outcome of :func:`check_equivariance`: holds on every sample, violated with the first
    renaming that breaks it (shrunk to a small one) and both answers, or inconclusive."""

    status: Status
    message: str
    samples: int = 0  # renamings tried
    nontrivial: int = 0  # of which did not map the input to itself
    calls: int = 0  # assignor calls made
    renaming: Renaming | None = None
    renamed_input: RebalanceInput | None = None
    expected: Assignment | tuple | None = None  # the renamed answer r(f(x)) (a tuple of answers for a chooser)
    actual: Assignment | tuple | None = None  # the answer to the renamed input f(r(x))

    @property
    def holds(self) -> bool:
        return self.status is Status.HOLDS

    @property
    def violated(self) -> bool:
        return self.status is Status.VIOLATED

    def to_verdict(self, name: str = "renaming") -> Verdict:
        members = tuple(sorted({a for p in (self.renaming.members if self.renaming else ()) for a in p}, key=id_key))
        tasks = tuple(sorted({a for p in (self.renaming.tasks if self.renaming else ()) for a in p}, key=id_key))
        measure = {"samples": self.samples, "nontrivial": self.nontrivial, "calls": self.calls}
        if self.renaming is not None:
            measure["renaming"] = self.renaming.to_json()
        return Verdict(property=name, status=self.status, message=self.message, members=members, tasks=tasks, measure=measure)


def _layout(answer: Assignment) -> str:
    rows = []
    for member_id, a in answer.members:
        roles = "  ".join(f"{r} {','.join(getattr(a, r))}" for r in ROLES if getattr(a, r))
        rows.append(f"{member_id}: {roles or '-'}")
    if answer.probing_rebalance:
        rows.append("(probing rebalance)")
    return "; ".join(rows)


def _layouts(answer) -> str:
    if isinstance(answer, Assignment):
        return _layout(answer)
    return f"{len(answer)} answers: " + " | ".join(_layout(a) for a in answer)


def check_equivariance(
    assignor: Callable[[RebalanceInput], Assignment],
    view: RebalanceInput,
    *,
    samples: int = 16,
    seed: int = 0,
    shrink: bool = True,
    classes: Mapping | None = None,
) -> EquivarianceResult:
    """Check on ``samples`` renamings drawn from ``seed`` that ``assignor`` answers renamed inputs
    with renamed answers, up to automorphism of the input (see the module docstring).

    Parameters
    ----------
    assignor : callable or chooser
        The leader's view to an :class:`Assignment`; it is called ``1 + samples`` times (more
        when shrinking). A nondeterministic assignor (an object with ``choices(view)``, every
        answer it may give) is checked on its answer *sets*: the renamed set must be the set
        of answers to the renamed input, up to automorphism; ``expected``/``actual`` of the
        result are then tuples. An :class:`~rebalproof.errors.AssignorError` it raises is passed on
        untouched: a crash is a finding about the assignor, not about its symmetry.
    view : RebalanceInput
        The input to rename.
    samples : int, keyword-only
        How many renamings to try (see :func:`sample_renamings`).
    seed : int, keyword-only
        The only source of randomness.
    shrink : bool, keyword-only
        On a violation, look for a smaller renaming that still breaks it (a swap of two
        instances reads better than a permutation of everything).
    classes : mapping of str to hashable, keyword-only
        Member id -> class; renamings only map an instance to one of its own class (the group
        model passes capacities: there only instances of equal capacity are interchangeable).
        Ids it does not name form one class. None: any member to any member.

    Returns
    -------
    EquivarianceResult
        Inconclusive when the view has nothing to rename, when every sample mapped the input
        to itself (no evidence either way) or when the assignor answers with ids the input
        does not have (that is for ``one-active`` and the codec to report).
    """
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise InputError(f"samples must be a whole number of at least 1, got {samples!r}")
    calls = 0
    several = callable(getattr(assignor, "choices", None))

    def call(v: RebalanceInput) -> tuple[Assignment, ...]:
        nonlocal calls
        calls += 1
        return tuple(assignor.choices(v)) if several else (assignor(v),)

    def one(answers):
        return answers if several else answers[0]

    answers = call(view)
    try:
        for answer in answers:
            check_ids(answer, view)
    except InputError as exc:
        return EquivarianceResult(
            status=Status.INCONCLUSIVE, calls=calls, message=f"the answer to the input is not an answer to it ({exc}); check it with the oracle first"
        )

    def breaks(renaming: Renaming):
        """None when the renaming is an automorphism of the input, else (ok, renamed, expected, actual)."""
        renamed = rename_input(view, renaming)
        if renamed == view:
            return None
        actual = call(renamed)
        expected = tuple(rename_assignment(answer, renaming) for answer in answers)
        try:
            for answer in actual:
                check_ids(answer, renamed)
        except InputError:
            return (False, renamed, one(expected), one(actual))
        return (same_answers_up_to_automorphism(renamed, expected, actual), renamed, one(expected), one(actual))

    tried = nontrivial = 0
    for renaming in sample_renamings(view, samples=samples, seed=seed, classes=classes):
        tried += 1
        outcome = breaks(renaming)
        if outcome is None:
            continue
        nontrivial += 1
        ok, renamed, expected, actual = outcome
        if ok:
            continue
        if shrink:
            renaming, renamed, expected, actual = _shrink(renaming, (renamed, expected, actual), breaks, classes)
        return EquivarianceResult(
            status=Status.VIOLATED,
            samples=tried,
            nontrivial=nontrivial,
            calls=calls,
            renaming=renaming,
            renamed_input=renamed,
            expected=expected,
            actual=actual,
            message=(
                f"the answer to the renamed input is not the renamed answer, under the renaming {renaming.describe()}: "
                f"expected (renamed answer) {_layouts(expected)}; got {_layouts(actual)}"
            ),
        )
    if tried == 0:
        return EquivarianceResult(
            status=Status.INCONCLUSIVE, calls=calls,
            message="nothing to rename: the input has one member and no two tasks or subtopologies of equal size",
        )
    if nontrivial == 0:
        return EquivarianceResult(
            status=Status.INCONCLUSIVE, samples=tried, calls=calls,
            message=f"all {tried} sampled renamings map the input to itself, so they prove nothing; try an input with less symmetry",
        )
    return EquivarianceResult(
        status=Status.HOLDS, samples=tried, nontrivial=nontrivial, calls=calls,
        message=f"equivariant on {nontrivial} renamings of the input (of {tried} sampled, seed {seed})",
    )


_SHRINK_BUDGET = 32


def _shrink(renaming: Renaming, found, breaks, classes=None):
    """A small renaming that still breaks equivariance: try its member part, its task part,
    then single swaps of the ids it moves, keeping the smallest that breaks."""
    best, best_found = renaming, found
    budget = _SHRINK_BUDGET
    improved = True
    while improved and budget > 0:
        improved = False
        for candidate in _smaller(best, classes):
            if budget <= 0:
                break
            budget -= 1
            outcome = breaks(candidate)
            if outcome is not None and not outcome[0]:
                best, best_found = candidate, outcome[1:]
                improved = True
                break
    return (best, *best_found)


def _smaller(renaming: Renaming, classes=None) -> Iterator[Renaming]:
    seen = {renaming}

    def fresh(r: Renaming):
        if r.size < renaming.size and not r.is_identity and r not in seen:
            seen.add(r)
            return True
        return False

    parts = (Renaming(members=renaming.members), Renaming(tasks=renaming.tasks))
    for r in parts:
        if fresh(r):
            yield r
    moved = [a for a, _ in renaming.members]
    for i, a in enumerate(moved):
        for b in moved[i + 1:]:
            if classes and classes.get(a) != classes.get(b):
                continue
            r = Renaming(members={a: b, b: a})
            if fresh(r):
                yield r
    by_sub: dict[str, list[str]] = {}
    for a, _ in renaming.tasks:
        by_sub.setdefault(subtopology_of(a), []).append(a)
    for ids in by_sub.values():
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                r = Renaming(tasks={a: b, b: a})
                if fresh(r):
                    yield r
