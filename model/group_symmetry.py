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
renamings to test a declaration or an external assignor (the hook a later ``--symmetry auto``
uses). Sampling can refute equivariance, never prove it.

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

import random
from dataclasses import dataclass

from rebalproof.model.explorer import Limits, explore
from rebalproof.model.group_fingerprint import fingerprint_symmetric, task_permutations
from rebalproof.model.group_state import GroupState
from rebalproof.model.names import subtopology_of

__all__ = ["rename_state", "random_renaming", "EquivarianceReport", "check_equivariance"]


def rename_state(state: GroupState, members: dict, tasks: dict, task_order: dict | None = None) -> GroupState:
    """``state`` with member ids renamed by ``members`` and task ids by ``tasks`` (missing: unchanged)."""
    order = task_order or {}

    def m(x):
        return members.get(x, x)

    def ts(xs):
        return tuple(sorted((tasks.get(t, t) for t in xs), key=lambda t: (order.get(t, 0), t)))

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
                    lags=tuple(sorted(((tasks.get(t, t), c) for t, c in mem.lags), key=lambda p: (order.get(p[0], 0), p[0]))),
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


def random_renaming(state: GroupState, task_ids, rng: random.Random) -> tuple[dict, dict]:
    """A random renaming of the ids used so far (``I1..I<spawned>``) and of partitions within subtopologies."""
    used = [f"I{i}" for i in range(1, state.spawned + 1)]
    shuffled = used[:]
    rng.shuffle(shuffled)
    groups: dict[str, list[str]] = {}
    for t in task_ids:
        groups.setdefault(subtopology_of(t), []).append(t)
    tmap = {}
    for ids in groups.values():
        perm = ids[:]
        rng.shuffle(perm)
        tmap.update(zip(ids, perm))
    return dict(zip(used, shuffled)), tmap


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
    exp = explore(model, limits=Limits(max_states=max_states))
    indices = sorted(rng.sample(range(exp.states), min(samples, exp.states)))
    checked = 0
    for idx in indices:
        state = exp.state_at(idx)
        mmap, tmap = random_renaming(state, model.task_ids, rng)
        renamed = rename_state(state, mmap, tmap, order)
        here = {fingerprint_symmetric(t, perms) for _, t in model.expand(state)}
        there = {fingerprint_symmetric(t, perms) for _, t in model.expand(renamed)}
        checked += 1
        if here != there:
            return EquivarianceReport(equivariant=False, checked=checked, state=state, members=mmap, tasks=tmap)
    return EquivarianceReport(equivariant=True, checked=checked)
