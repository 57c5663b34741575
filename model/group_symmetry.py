"""Renaming states, and the sampled equivariance check that decides whether symmetry reduction is sound.

Symmetry reduction (:func:`~rebalproof.model.group_fingerprint.fingerprint_symmetric`) merges
states that differ by a renaming of instances and of partitions within subtopologies. It is
sound when the successor relation commutes with renaming *up to that equivalence*:

    for every state ``s`` and renaming ``p``:
    canon(successors(p(s))) == canon(successors(s))     (as sets of canonical states)

This is "equivariant up to automorphism": an assignor that breaks ties by id may pick a
different one of two members that the state cannot tell apart (an automorphism of the state),
and still qualify; one that breaks ties between members the state *can* tell apart does not.
The model itself commutes with renaming (joins take a fresh id, the leader elected after a
fail-over is any member), so the assignor decides. A built-in declares it
(``AssignorInfo.equivariant``); :func:`check_equivariance` samples reachable states and random
renamings to test a declaration or an external assignor. ``--symmetry auto`` uses
:func:`auto_symmetry`, which checks the assignor itself (:func:`rebalproof.symmetry.check_equivariance`,
up to automorphism) on leader views of the first BFS levels to decide whether to reduce; renamings
are :class:`rebalproof.symmetry.Renaming` values, which :func:`rename_state` applies to states
too. Sampling can refute equivariance, never prove it: after a reduced run,
:func:`verify_reached` asks every view it reached under every renaming the reduction merges by,
which is what makes the reduction sound.

With mixed capacities (:attr:`~rebalproof.model.group_bounds.Bounds.capacities`) capacity belongs
to the instance id, so only instances of equal capacity are interchangeable: the reduction keeps
capacity in the canonical encoding, and every sampled renaming here maps an instance to one of
its own capacity (``model.capacity_classes``).

Examples
--------
>>> from rebalproof.model.group_model import GroupModel
>>> from rebalproof.model.group_bounds import Bounds
>>> from rebalproof.model.group_protocol import protocol
>>> from rebalproof.model.toy_assignors import BalancedChoices, RoundRobin
>>> bounds = Bounds(instances=3, initial=2, subtopologies=1, partitions=3, standbys=0, events=1)
>>> check_equivariance(GroupModel(protocol=protocol("cooperative"), bounds=bounds, assignor=BalancedChoices()), samples=20).equivariant
True
>>> check_equivariance(GroupModel(protocol=protocol("cooperative"), bounds=bounds, assignor=RoundRobin()), samples=100).equivariant
False
"""

from __future__ import annotations

import collections
import itertools
import random
from dataclasses import dataclass

from rebalproof.model.explorer import Limits, explore
from rebalproof.model.group_fingerprint import fingerprint_symmetric, task_permutations
from rebalproof.model.group_state import GroupState
from rebalproof.properties.verdict import Status, Verdict
from rebalproof.errors import AssignorError
from rebalproof.symmetry import (
    EquivarianceResult, Renaming, _layouts, by_subtopology, rename_assignment, rename_input, same_answers_up_to_automorphism,
)
from rebalproof.symmetry import check_equivariance as check_assignor

__all__ = [
    "rename_state",
    "random_renaming",
    "EquivarianceReport",
    "check_equivariance",
    "leader_views",
    "AutoSymmetry",
    "auto_symmetry",
    "reduction_renamings",
    "verify_reached",
    "ReachedCheck",
]


def rename_state(state: GroupState, members, tasks: dict | None = None, task_order: dict | None = None) -> GroupState:
    """``state`` with member ids renamed by ``members`` and task ids by ``tasks`` (missing: unchanged).

    ``members`` may also be a :class:`rebalproof.symmetry.Renaming` (then ``tasks`` is left
    out): the one renaming value serves leader views (:func:`rebalproof.symmetry.rename_input`)
    and model states alike.
    """
    order = task_order or {}
    if isinstance(members, Renaming):
        if tasks is not None:
            raise TypeError("give either a Renaming or the members and tasks maps, not both")
        renaming = members
    else:
        renaming = Renaming(members=members, tasks=tasks or {})
    m, t_ = renaming.member, renaming.task

    def ts(xs):
        return tuple(sorted((t_(t) for t in xs), key=lambda t: (order.get(t, 0), t)))

    def mkey(x):
        return (len(x), x)

    new_members = tuple(
        sorted(
            (
                mem._replace(
                    id=m(mem.id),
                    active=ts(mem.active),
                    standby=ts(mem.standby),
                    warmup=ts(mem.warmup),
                    lags=tuple(sorted(((t_(t), c) for t, c in mem.lags), key=lambda p: (order.get(p[0], 0), p[0]))),
                )
                for mem in state.members
            ),
            key=lambda x: mkey(x.id),
        )
    )
    return state._replace(
        members=new_members,
        leader=None if state.leader is None else m(state.leader),
        memory=None if state.memory is None else tuple(sorted((m(x) for x in state.memory), key=mkey)),
        pending=tuple(sorted(((m(e[0]), ts(e[1]), ts(e[2]), ts(e[3])) for e in state.pending), key=lambda e: mkey(e[0]))),
    )


def random_renaming(state: GroupState, task_ids, rng: random.Random, classes: dict | None = None) -> tuple[dict, dict]:
    """A random renaming of the ids used so far (``I1..I<spawned>``, each within its class of
    ``classes``: member id -> capacity) and of partitions within subtopologies."""
    used = [f"I{i}" for i in range(1, state.spawned + 1)]
    groups: dict = {}
    for m in used:
        groups.setdefault(classes.get(m) if classes else None, []).append(m)
    mmap = {}
    for group in groups.values():
        shuffled = group[:]
        rng.shuffle(shuffled)
        mmap.update(zip(group, shuffled))
    tmap = {}
    for ids in by_subtopology(task_ids).values():
        perm = ids[:]
        rng.shuffle(perm)
        tmap.update(zip(ids, perm))
    return mmap, tmap


@dataclass(frozen=True, kw_only=True)
class EquivarianceReport:
    """What sampling found: ``equivariant`` is False with a counterexample, True if none was found."""

    equivariant: bool
    checked: int
    state: GroupState | None = None
    members: dict | None = None
    tasks: dict | None = None

    def describe(self) -> str:
        if self.equivariant:
            return f"no counterexample in {self.checked} sampled renamings (sampling cannot prove equivariance)"
        return f"not equivariant: renaming {self.members} / {self.tasks} changes the successors of a reachable state"


def check_equivariance(model, *, samples: int = 50, seed: int = 0, max_states: int = 3000) -> EquivarianceReport:
    """Sample reachable states of ``model`` and random renamings; compare canonical successor sets."""
    rng = random.Random(seed)
    perms = task_permutations(model.task_ids)
    order = {t: i for i, t in enumerate(model.task_ids)}
    classes = getattr(model, "capacity_classes", None)
    exp = explore(model, limits=Limits(max_states=max_states))
    indices = sorted(rng.sample(range(exp.states), min(samples, exp.states)))
    checked = 0
    for idx in indices:
        state = exp.state_at(idx)
        mmap, tmap = random_renaming(state, model.task_ids, rng, classes)
        renamed = rename_state(state, mmap, tmap, order)
        here = {fingerprint_symmetric(t, perms, classes) for _, t in model.expand(state)}
        there = {fingerprint_symmetric(t, perms, classes) for _, t in model.expand(renamed)}
        checked += 1
        if here != there:
            return EquivarianceReport(equivariant=False, checked=checked, state=state, members=mmap, tasks=tmap)
    return EquivarianceReport(equivariant=True, checked=checked)


# -- --symmetry auto ----------------------------------------------------------------------

def leader_views(model, *, levels: int = 3, max_states: int = 400, views: int = 6, seed: int = 0) -> list:
    """Distinct leader views of reachable states, for sampling: the first BFS levels (the
    initial states and ``levels`` steps on) are explored, every state with a rebalance due
    gives its view, and up to ``views`` of them are kept (the first one always, the others
    drawn from ``seed``), in BFS order.

    The exploration asks ``model``'s assignor for answers; give a model of its own so that
    these calls are not counted as the main check's.
    """
    exp = explore(model, limits=Limits(max_depth=levels, max_states=max_states))
    found, seen = [], set()
    for idx in range(exp.states):
        state = exp.state_at(idx)
        if not state.triggers or not state.members:
            continue
        view = model.view_of(state)
        if view not in seen:
            seen.add(view)
            found.append(view)
    if len(found) <= views:
        return found
    rng = random.Random(seed)
    keep = sorted([0] + rng.sample(range(1, len(found)), views - 1))
    return [found[i] for i in keep]


@dataclass(frozen=True, kw_only=True)
class AutoSymmetry:
    """What ``--symmetry auto`` decided: reduce only when equivariance held on every sampled
    view and at least one renaming really moved a view.

    ``verdict`` is the ``equivariance`` finding: ``not promised`` (no protocol promises that
    an implementation ignores names; Kafka's own assignor breaks ties by id) with what was
    observed, ``violated`` carrying the renaming, the renamed view and both answers.
    """

    reduce: bool
    status: Status  # holds / violated / inconclusive, as observed
    message: str
    views: int = 0
    samples: int = 0
    nontrivial: int = 0
    calls: int = 0
    seed: int = 0
    violation: object = None  # the rebalproof.symmetry.EquivarianceResult that broke it

    def to_verdict(self) -> Verdict:
        measure = {"views": self.views, "samples": self.samples, "nontrivial": self.nontrivial, "calls": self.calls,
                   "seed": self.seed}
        members = tasks = ()
        if self.violation is not None:
            v = self.violation.to_verdict("equivariance")
            members, tasks = v.members, v.tasks
            measure["renaming"] = self.violation.renaming.to_json()
        return Verdict(property="equivariance", status=Status.NOT_PROMISED,
                       message=f"observed: {self.status.value}: {self.message}", members=members, tasks=tasks,
                       measure=measure)

    def to_json(self) -> dict:
        from rebalproof.model.codec import encode_assignment, encode_input

        out = {"mode": "auto", "reduced": self.reduce, "observed": self.status.value, "message": self.message,
               "views": self.views, "samples": self.samples, "nontrivial": self.nontrivial, "calls": self.calls,
               "seed": self.seed}
        v = self.violation
        if v is not None:
            def enc(a):
                return [encode_assignment(x) for x in a] if isinstance(a, tuple) else encode_assignment(a)

            out["renaming"] = v.renaming.to_json()
            out["renamed_input"] = encode_input(v.renamed_input)
            out["expected"] = enc(v.expected)
            out["actual"] = enc(v.actual)
        return out


def auto_symmetry(model_factory, assignor, *, seed: int = 0, samples: int = 8, views: int = 6, levels: int = 3) -> AutoSymmetry:
    """Decide ``--symmetry auto``: check :func:`rebalproof.symmetry.check_equivariance` of
    ``assignor`` (a callable or a chooser) on ``samples`` renamings of each of up to ``views``
    leader views of reachable states (:func:`leader_views` of ``model_factory()``, a fresh
    model so that its calls are counted here). Deterministic in ``seed``.

    An :class:`~rebalproof.errors.AssignorError` while sampling is not decided here: the
    result is inconclusive (no reduction) and the main exploration reports the finding.

    Examples
    --------
    >>> from rebalproof.model import group_bounds, group_model, group_protocol
    >>> from rebalproof.model.toy_assignors import BalancedChoices, RoundRobin
    >>> def factory(a):
    ...     bounds = group_bounds.Bounds(instances=3, initial=2, subtopologies=1, partitions=3, standbys=0, events=1)
    ...     cooperative = group_protocol.protocol("cooperative")
    ...     return lambda: group_model.GroupModel(protocol=cooperative, bounds=bounds, assignor=a)
    >>> auto_symmetry(factory(BalancedChoices()), BalancedChoices()).reduce
    True
    >>> found = auto_symmetry(factory(RoundRobin()), RoundRobin())
    >>> found.reduce, found.status.value
    (False, 'violated')
    """
    model = model_factory()
    try:
        sampled = leader_views(model, levels=levels, views=views, seed=seed)
    except AssignorError as exc:
        return AutoSymmetry(reduce=False, status=Status.INCONCLUSIVE, seed=seed,
                            calls=getattr(model._chooser, "calls", 0),
                            message=f"the assignor failed while sampling views ({exc.kind}); exploring without reduction")
    calls = model._chooser.calls
    classes = getattr(model, "capacity_classes", None)
    tried = nontrivial = 0
    for i, view in enumerate(sampled):
        try:
            result = check_assignor(assignor, view, samples=samples, seed=seed * 1000 + i, classes=classes)
        except AssignorError as exc:
            return AutoSymmetry(reduce=False, status=Status.INCONCLUSIVE, views=i, samples=tried, nontrivial=nontrivial,
                                calls=calls, seed=seed,
                                message=f"the assignor failed on a renamed view ({exc.kind}); exploring without reduction")
        calls += result.calls
        tried += result.samples
        nontrivial += result.nontrivial
        if result.violated:
            return AutoSymmetry(
                reduce=False, status=Status.VIOLATED, views=i + 1, samples=tried, nontrivial=nontrivial, calls=calls,
                seed=seed, violation=result,
                message=f"the answer depends on names: on sampled view {i + 1}, {result.message}",
            )
    if nontrivial == 0:
        return AutoSymmetry(reduce=False, status=Status.INCONCLUSIVE, views=len(sampled), samples=tried, calls=calls,
                            seed=seed, message=f"no sampled renaming moved any of {len(sampled)} leader views; "
                                               "exploring without reduction")
    return AutoSymmetry(
        reduce=True, status=Status.HOLDS, views=len(sampled), samples=tried, nontrivial=nontrivial, calls=calls, seed=seed,
        message=(f"equivariant on {nontrivial} renamings of {len(sampled)} leader views (seed {seed}); "
                 "sampling cannot prove it"),
    )


def reduction_renamings(view, member_ids, classes: dict | None = None):
    """Every renaming the reduced exploration merges states by, as it acts on ``view``, once each.

    Members: every permutation of ``member_ids`` (the model's ``I1..In``) within its capacity
    class of ``classes``, restricted to the ids the view names (so a member may take the name of
    one the view does not have); tasks: every permutation of the partitions within each
    subtopology. The identity is left out.
    """
    present = set(view.member_ids) | set(view.previous_members or ())
    groups: dict = {}
    for m in member_ids:
        groups.setdefault(classes.get(m) if classes else None, []).append(m)
    member_maps = set()
    for perms in itertools.product(*(itertools.permutations(g) for g in groups.values())):
        mapping = {}
        for group, perm in zip(groups.values(), perms):
            mapping.update(zip(group, perm))
        member_maps.add(tuple(sorted((a, b) for a, b in mapping.items() if a in present and a != b)))
    per_sub = [[tuple((a, b) for a, b in zip(ids, perm) if a != b) for perm in itertools.permutations(ids)]
               for ids in by_subtopology(view.task_ids).values()]
    for members in sorted(member_maps):
        for tasks in itertools.product(*per_sub):
            flat = tuple(pair for part in tasks for pair in part)
            if members or flat:
                yield Renaming(members=dict(members), tasks=dict(flat))


def verify_reached(found: AutoSymmetry, assignor, reached: list, *, classes: dict | None = None,
                   budget=None, max_views: int | None = None) -> AutoSymmetry:
    """After a reduced exploration: the assignor's answer to every renaming of every view the
    exploration reached must be the renamed answer (up to automorphism of the view), for every
    renaming the reduction merges by (:func:`reduction_renamings`). That is what makes the
    reduction sound: then the successors of a renamed state are the renamed successors, for
    every state of the full space (by induction from the initial state). Sampling alone missed
    a name-dependent bug (``tests/test_red2_symmetry.py``).

    ``reached`` holds ``(view, ids)``: each view with the pool ids handed out in the states that
    asked it (``I1 .. I<spawned>``, :meth:`~rebalproof.model.group_model.GroupModel.views_asked_with_ids`),
    the ids the reduction renames among there. Each distinct renamed view is asked once (more
    calls than a run without reduction can make: partial-order reduction and the initial state
    keep it from some renamed views). ``max_views`` caps the renamed views asked: past it the
    check would cost more than the exploration it saves, so the result does not reduce (the
    caller explores again in full, which relies on no check). Returns ``found`` with the figures, a violated result (the caller
    explores again without reduction), or, when ``budget`` ran out first, an inconclusive one
    that still reduces: the report then says the reduction rests on an unfinished check.
    """
    return ReachedCheck(found, assignor, classes=classes).add(reached, budget=budget, max_views=max_views)


class ReachedCheck:
    """:func:`verify_reached` in steps: :meth:`add` checks the views reached since the last step,
    the views and renamed views already asked kept, so the steps together ask and count what one
    call over all the views would (``check`` runs a step each time the reduced run's views
    double: a reduction that breaks stops the run there, not after it spent its time)."""

    def __init__(self, found: AutoSymmetry, assignor, *, classes: dict | None = None):
        self.found, self.assignor, self.classes = found, assignor, classes
        self.several = callable(getattr(assignor, "choices", None))
        self.memo: dict = {}
        self.calls = 0
        self.checked: set = set()
        self.views = self.renamed_views = 0
        self.reached = 0  # views handed to :meth:`add` so far
        self.pending: collections.deque = collections.deque()  # handed over, not checked yet (the time ran out first)
        self.last: AutoSymmetry = found

    def _answers(self, view):
        if view not in self.memo:
            self.calls += 1
            self.memo[view] = tuple(self.assignor.choices(view)) if self.several else (self.assignor(view),)
        return self.memo[view]

    def _result(self, reduce: bool, status: Status, message: str, violation=None) -> AutoSymmetry:
        found = self.found
        self.last = AutoSymmetry(
            reduce=reduce, status=status, views=found.views + self.views, samples=found.samples + self.renamed_views,
            nontrivial=found.nontrivial + self.renamed_views, calls=found.calls + self.calls, seed=found.seed,
            violation=violation, message=message,
        )
        return self.last

    def add(self, reached: list, *, budget=None, max_views: int | None = None, pause_at: int | None = None) -> AutoSymmetry:
        """Check ``reached`` (more ``(view, ids)``) too; the result over every view added so far (see :func:`verify_reached`).

        ``pause_at``: stop before the next view once this many renamed views were asked, the rest
        kept for the next step (a step while the run goes on asks no more than the cap of the
        check at its end would allow; in the same order, so the counts are a single check's)."""
        found, several, checked, answers = self.found, self.several, self.checked, self._answers
        if not found.reduce or (not reached and not self.reached):
            return found
        if not self.last.reduce:  # broken by an earlier step: it stays broken
            return self.last
        self.reached += len(reached)
        self.pending.extend(reached)
        result = self._result
        while self.pending:
            view, member_ids = self.pending[0]
            if view in checked:
                self.pending.popleft()
                continue
            if pause_at is not None and self.renamed_views >= pause_at:
                return result(True, Status.INCONCLUSIVE, f"paused after {self.renamed_views} renamed views; {len(self.pending)} views to check")
            if budget is not None and budget.spent():  # the views not checked stay for the next step: none is taken as checked
                return result(
                    True, Status.INCONCLUSIVE,
                    (f"the time ran out after checking {self.views} of {self.reached} reached leader views under every renaming: "
                     "the reduction rests on an unfinished check (--symmetry off relies on none)"),
                )
            self.pending.popleft()
            checked.add(view)
            self.views += 1
            try:
                base = answers(view)
            except AssignorError:
                continue  # the exploration reports the finding itself
            for renaming in reduction_renamings(view, member_ids, self.classes):
                renamed = rename_input(view, renaming)
                if renamed in checked:
                    continue
                checked.add(renamed)
                self.renamed_views += 1
                if max_views is not None and self.renamed_views > max_views:
                    return result(
                        False, Status.INCONCLUSIVE,
                        (f"equivariant on the {self.renamed_views - 1} renamed views checked, but checking every renaming of "
                         f"every view the reduced run reached would ask more than {max_views}: explored again without "
                         "reduction, which relies on no check"),
                    )
                try:
                    actual = answers(renamed)
                except AssignorError:
                    continue
                expected = tuple(rename_assignment(a, renaming) for a in base)
                if actual == expected:
                    continue
                try:
                    same = same_answers_up_to_automorphism(renamed, expected, actual)
                except Exception:  # an answer with ids the view lacks: not the renamed answer
                    same = False
                if same:
                    continue
                one = (lambda a: a) if several else (lambda a: a[0])
                broken = EquivarianceResult(
                    status=Status.VIOLATED, samples=self.renamed_views, nontrivial=self.renamed_views, calls=self.calls, renaming=renaming,
                    renamed_input=renamed, expected=one(expected), actual=one(actual),
                    message=(f"the answer to the renamed input is not the renamed answer, under the renaming {renaming.describe()}: "
                             f"expected (renamed answer) {_layouts(one(expected))}; got {_layouts(one(actual))}"),
                )
                return result(
                    False, Status.VIOLATED,
                    (f"the answer depends on names: on a leader view reached by the reduced exploration, {broken.message}; "
                     "explored again without reduction"),
                    violation=broken,
                )
        return result(
            True, Status.HOLDS,
            (f"equivariant on every renaming of the {self.views} leader views the reduced exploration reached "
             f"({self.renamed_views} renamed views asked; seed {found.seed} for the first samples): the reduction is sound"),
        )

