"""Small assignors the model checks need that are not built-ins: a naive learner and a round robin.

They are not registered in :mod:`rebalproof.model.assignors` (the built-ins' registry); the
``check`` command knows them as ``learner-naive`` (options ``learners_to=any|new|none``) and
``round-robin``, and they are reachable as ``py:`` specs through the ``*_json`` functions.

:class:`NaiveLearner` reads seed 001's "Assignment Algorithm" literally:

- actives: "To instances with learner tasks that indicate 'ready'", "To previous owners",
  "To unready learner tasks owners", "To instances with standby tasks", "To resource
  available instances" (least loaded, ties by id). A previous owner of a task it revoked at
  the join (being learned) is the member that still reports it caught up and holds it in no
  role (the learner encoding, docs/DESIGN.md). A stateless task on a leaving member moves at once.
- "Keep existing learner tasks' assignment unchanged" (until the learner took over).
- "Pick new learner tasks out of heaviest loaded instances" and assign them "To new-coming
  instances with abundant resource": *abundant resource* is read as a free thread (load below
  capacity). ``learners_to="any"`` is the naive rule that lets any instance with a free thread
  take learners: seed 001 Version 1.0 warns that "when the number of tasks are much smaller
  than total cluster capacity, we could fall in endless resource shuffling" (an idle instance
  always exists, so a task always moves to it). ``learners_to="new"`` is Version 1.0's rule:
  learners only to instances not in ``previous_members`` (none after a leader fail-over).
  ``learners_to="none"``: no learners for balance (sticky, least-loaded for the rest).
- every active of a leaving member (v2) gets a learner on a non-leaving member, whatever the
  rule, a member with a matching standby first (its standby becomes the learner: "Standby
  Task Utilization").
- standbys: ``min(num_standby_replicas, staying - 1)`` per stateful task, on members without a
  copy, current standby holders first, then least loaded. Never a probing rebalance.

Ties are broken by id, so neither is equivariant under renaming.

Examples
--------
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="0_0"), Task(id="0_1")),
...     members=(Member(id="I1", active=("0_0", "0_1"), lags={"0_0": 0, "0_1": 0}), Member(id="I2")),
...     previous_members=("I1", "I2"))
>>> NaiveLearner(learners_to="any")(view).of("I2").warmup
('0_0',)
>>> NaiveLearner(learners_to="new")(view).of("I2").warmup
()
>>> RoundRobin()(view).of("I2").active
('0_1',)
"""

from __future__ import annotations

from rebalproof.model.assignment import Assignment
from rebalproof.model.codec import decode_input, encode_assignment
from rebalproof.model.names import id_key
from rebalproof.model.ranking import is_caught_up
from rebalproof.model.view import RebalanceInput

__all__ = ["NaiveLearner", "RoundRobin", "BalancedChoices", "naive_learner_json", "naive_learner_v1_json", "round_robin_json"]


class NaiveLearner:
    """Seed 001's learner assignment algorithm, read literally (see the module docstring)."""

    def __init__(self, *, learners_to: str = "any"):
        if learners_to not in ("any", "new", "none"):
            raise ValueError("learners_to must be 'any', 'new' or 'none'")
        self.learners_to = learners_to
        self.name = f"learner-naive:learners_to={learners_to}"

    def __call__(self, view: RebalanceInput) -> Assignment:
        ids = view.member_ids
        staying = tuple(m.id for m in view.members if not m.leaving) or ids
        cap = {m.id: view.member(m.id).capacity for m in view.members}
        active: dict[str, list[str]] = {m: [] for m in ids}
        warmup: dict[str, list[str]] = {m: [] for m in ids}
        standby: dict[str, list[str]] = {m: [] for m in ids}
        load = {m: 0 for m in ids}
        owner: dict[str, str] = {}

        def least(cands):
            return min(cands, key=lambda m: (load[m] / cap[m], id_key(m)))

        for task in view.tasks:
            t = task.id
            held_by = view.owners(t)
            learners = view.holders(t, "warmup")
            pick = None
            if task.stateful:
                ready = [m for m in learners if m in staying and is_caught_up(view, m, t)]
                prev = list(held_by) or [
                    m.id for m in view.members
                    if t not in m.copies and m.lag(t) is not None and m.lag(t) <= view.config.acceptable_recovery_lag
                ]
                standbys = [m for m in view.holders(t, "standby") if m in staying]
                for cands in (ready, prev, learners, standbys):
                    if cands:
                        pick = least(cands)
                        break
            else:
                prev = [m for m in held_by if m in staying]
                if prev:
                    pick = least(prev)
            if pick is None:
                pick = least(staying)
            active[pick].append(t)
            load[pick] += 1
            owner[t] = pick

        # keep learners that did not take over; learners of leaving members' tasks first
        learning: dict[str, str] = {}
        for m in view.members:
            for t in m.warmup:
                if owner.get(t) != m.id and not m.leaving and t not in learning and view.task(t).stateful:
                    warmup[m.id].append(t)
                    learning[t] = m.id

        def busy(m):
            return load[m] + len(warmup[m])

        def can_learn(m, t):
            return m != owner[t] and m in staying

        # v2: every active of a leaving member is learned on a staying member, standby holders
        # first ("Standby Task Utilization": a matching standby becomes the learner)
        for t in view.stateful_task_ids:
            if view.member(owner[t]).leaving and t not in learning:
                cands = [m for m in staying if can_learn(m, t) and not view.member(m).leaving]
                if cands:
                    m = min(cands, key=lambda x: (t not in view.member(x).standby, busy(x), id_key(x)))
                    warmup[m].append(t)
                    learning[t] = m

        if self.learners_to != "none":
            if self.learners_to == "new":
                prev = set(view.previous_members or ()) if view.previous_members is not None else None
                takers = [] if prev is None else [m for m in staying if m not in prev]
            else:
                takers = list(staying)
            while True:
                free = [m for m in takers if busy(m) < cap[m]]
                if not free:
                    break
                heavy = sorted(staying, key=lambda m: (-load[m] / cap[m], id_key(m)))
                moved = False
                for h in heavy:
                    if load[h] == 0:
                        break
                    for t in active[h]:
                        if not view.task(t).stateful or t in learning:
                            continue
                        cands = [m for m in free if can_learn(m, t) and t not in view.member(m).standby]
                        if cands:
                            m = min(cands, key=lambda x: (busy(x), id_key(x)))
                            warmup[m].append(t)
                            learning[t] = m
                            moved = True
                            break
                    if moved:
                        break
                if not moved:
                    break

        want = view.config.num_standby_replicas
        for t in view.stateful_task_ids:
            n = min(want, len(staying) - 1)
            taken = {owner[t]} | {m for m in ids if t in warmup[m]}
            current = [m for m in view.holders(t, "standby") if m in staying and m not in taken]
            others = sorted((m for m in staying if m not in taken and m not in current), key=lambda x: (busy(x) + len(standby[x]), id_key(x)))
            for m in (current + others)[: max(n, 0)]:
                standby[m].append(t)
        return Assignment.build({m: {"active": active[m], "standby": standby[m], "warmup": warmup[m]} for m in ids})


class RoundRobin:
    """Tasks dealt round-robin over the non-leaving members in id order; actives only, no stickiness.

    Correct (one active per task) and balanced, but it moves tasks whenever membership changes:
    the simplest assignor to exercise hand-overs with.
    """

    name = "round-robin"

    def __call__(self, view: RebalanceInput) -> Assignment:
        staying = [m.id for m in view.members if not m.leaving] or list(view.member_ids)
        out = {m: {"active": []} for m in view.member_ids}
        for i, t in enumerate(view.task_ids):
            out[staying[i % len(staying)]]["active"].append(t)
        return Assignment.build(out)


def naive_learner_json(obj: dict) -> dict:
    """``py:`` form of ``NaiveLearner(learners_to="any")``."""
    return encode_assignment(NaiveLearner(learners_to="any")(decode_input(obj)))


def naive_learner_v1_json(obj: dict) -> dict:
    """``py:`` form of ``NaiveLearner(learners_to="new")`` (seed 001 Version 1.0)."""
    return encode_assignment(NaiveLearner(learners_to="new")(decode_input(obj)))


def round_robin_json(obj: dict) -> dict:
    """``py:`` form of :class:`RoundRobin`."""
    return encode_assignment(RoundRobin()(decode_input(obj)))


class BalancedChoices:
    """A nondeterministic assignor: every sticky answer that places the unowned tasks best.

    Actives owned by a non-leaving member stay; the other tasks go anywhere among the
    non-leaving members such that the loads are as even as possible (least sum of squared
    loads). No standbys, no warmups, no probing. Each such answer is a separate choice, so
    the answer *set* depends only on loads and ownership: it commutes with renaming members
    and tasks (equivariant), the case where symmetry reduction is sound.
    """

    name = "balanced-choices"

    def choices(self, view: RebalanceInput) -> tuple[Assignment, ...]:
        import itertools

        staying = [m.id for m in view.members if not m.leaving] or list(view.member_ids)
        keep: dict[str, list[str]] = {m: [] for m in view.member_ids}
        loose = []
        for t in view.task_ids:
            owners = [m for m in view.owners(t) if m in staying]
            if len(owners) == 1:
                keep[owners[0]].append(t)
            else:
                loose.append(t)
        best, out = None, []
        for targets in itertools.product(staying, repeat=len(loose)):
            loads = {m: len(keep[m]) for m in staying}
            for m in targets:
                loads[m] += 1
            cost = sum(v * v for v in loads.values())
            if best is None or cost < best:
                best, out = cost, [targets]
            elif cost == best:
                out.append(targets)
        answers = []
        for targets in out:
            roles = {m: {"active": list(keep[m])} for m in view.member_ids}
            for t, m in zip(loose, targets):
                roles[m]["active"].append(t)
            answers.append(Assignment.build(roles))
        return tuple(answers)
