"""Owners keep their own: the stateful half of ``stable`` under the ``sticky`` and ``eager`` rules.

The rule sets named for the sticky assignor promise that a stateful active stays with its owner
when nothing asks it to move. Seed 002 (KIP-441), "Related Work": "the more "sticky" the
assignment in Streams the better, so we tend to avoid this kind of simple round-robin assignment
on subsequent rebalances"; of the consumer's StickyAssignor: "a greedy assignment that should
produce an assignment that is as balanced as possible while maintaining all current
assignments"; "Constraints and Cost Function": replay time "is the reason we currently favor
stickiness".

What one answer shows for certain is a *needless exchange*. A staying member ``m`` loses a
stateful active ``A`` it owned to ``h``, and is given a stateful active ``B`` that another
member ``o`` owned going in. Then the answer with the roles of ``A`` and ``B`` traded (every
member's copy of ``A`` becomes its copy of ``B`` and the other way round) is valid exactly when
the answer is, gives every member the same number of actives, standbys and warmups, keeps ``A``
with its owner, and moves ``B`` to ``h`` instead of ``m``: one move fewer or the same moves. The
exchange is needless when that traded answer is no worse on every count the answer could have
aimed at:

- balance: within one of the same subtopologies the same number of copies per member; for ``A``
  and ``B`` of two subtopologies, the caller's ``balanced_alike(traded, A, B)`` (each
  subtopology's spread and within-one by every reading kept or improved: the sticky rules
  measure subtopology spread without promising it, and an assignor may aim at it);
- replay time (the lag rank of seed 002): every member that holds a copy of ``A`` or ``B`` in the
  answer is at least as caught up on the task it holds in the traded answer as on the one it
  holds in the answer. For the actives: ``m`` on ``A`` (its own, but an owner may still be
  restoring it) no worse than ``h`` on ``A``, and ``h`` on ``B`` no worse than ``m`` on ``B``;
  likewise every standby and warmup of the two. So a fresh round-robin deal (``m`` passes its own
  caught-up task to ``h``, which holds neither, and takes another owner's) is judged, while a
  move off a still-restoring owner to a caught-up copy, or one that a standby's state explains,
  is left alone as the assignor's way to avoid a restore (red team 11: an assignor minimising the
  actives and standbys not caught up was faulted for exactly those).

Not judged: tasks nobody owned going in (an orphan dealt to a member holding its state may push
that member's own task to another: Kafka's own sticky assignors do, seen in their recorded
answers), owners marked leaving (the sticky rules may treat them as gone), and stateless tasks
(``stable``'s own tests).

Examples
--------
>>> from rebalproof.model.assignment import Assignment, MemberAssignment
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=tuple(Task(id=t) for t in ("0_0", "0_1", "1_0", "1_1")), members=(
...     Member(id="I1", active=("0_0", "1_0")), Member(id="I2", active=("0_1", "1_1")), Member(id="I3")),
...     previous_members=("I1", "I2"))
>>> [str(x) for x in needless_exchanges(view, Assignment.build({"I1": {"active": ["0_0", "1_1"]}, "I2": {"active": ["0_1"]}, "I3": {"active": ["1_0"]}}))]
['1_0 from I1 to I3 while I1 is given 1_1 from I2']
>>> needless_exchanges(view, Assignment.build({"I1": {"active": ["0_0", "1_0"]}, "I2": {"active": ["0_1"]}, "I3": {"active": ["1_1"]}}))
()
"""

from __future__ import annotations

from dataclasses import dataclass

from rebalproof.model.assignment import Assignment, MemberAssignment
from rebalproof.model.names import id_key
from rebalproof.model.ranking import rank
from rebalproof.model.view import RebalanceInput

__all__ = ["Exchange", "needless_exchanges", "traded"]


@dataclass(frozen=True)
class Exchange:
    """``member`` lost ``kept`` (its own) to ``holder`` and was given ``taken`` from ``owner``."""

    member: str
    kept: str
    holder: str
    taken: str
    owner: str

    def __str__(self) -> str:
        return f"{self.kept} from {self.member} to {self.holder} while {self.member} is given {self.taken} from {self.owner}"


def traded(assignment: Assignment, a: str, b: str) -> Assignment:
    """``assignment`` with the roles of tasks ``a`` and ``b`` traded on every member."""
    swap = {a: b, b: a}
    members = {
        m: MemberAssignment(active=[swap.get(t, t) for t in x.active], standby=[swap.get(t, t) for t in x.standby],
                            warmup=[swap.get(t, t) for t in x.warmup])
        for m, x in assignment.members
    }
    return Assignment(members=members, probing_rebalance=assignment.probing_rebalance)


def _no_less_caught_up(view: RebalanceInput, assignment: Assignment, a: str, b: str) -> bool:
    """Every member holding a copy of ``a`` or ``b`` in ``assignment`` is at least as caught up
    (lag rank) on the task it holds in :func:`traded` as on the one it holds now."""
    swap = {a: b, b: a}
    for member, held in assignment.members:
        if not view.has_member(member):
            return False
        for t in set(held.copies) & {a, b}:
            if rank(view, member, swap[t]) > rank(view, member, t):
                return False
    return True


def needless_exchanges(view: RebalanceInput, assignment: Assignment, balanced_alike=None) -> tuple[Exchange, ...]:
    """Every needless exchange of the answer (module doc), in id order: at most one per member
    and task it lost (the first task it was given instead, by id). ``balanced_alike(traded, a,
    b)`` judges an exchange across subtopologies (None: only exchanges within one are judged)."""
    subtopology = {t.id: t.subtopology for t in view.tasks if t.stateful}  # the stateful tasks
    staying = {m.id for m in view.members if not m.leaving}
    out = []
    for m in sorted(view.members, key=lambda x: id_key(x.id)):
        if m.leaving:
            continue
        given = [t for t in assignment.of(m.id).active if t in subtopology]
        taken = sorted(
            ((t, o) for t in given if t not in m.active for o in view.owners(t) if o in staying and o != m.id),
            key=lambda p: (id_key(p[0]), id_key(p[1])),
        )
        if not taken:
            continue
        for kept in sorted((t for t in m.active if t in subtopology and t not in given), key=id_key):
            holders = set(assignment.actives_of(kept))
            if len(holders) != 1 or holders & set(view.owners(kept)):
                continue  # kept by an owner, or not one active (one-active's business)
            (holder,) = holders
            if not view.has_member(holder):
                continue
            for t, owner in taken:
                if not _no_less_caught_up(view, assignment, kept, t):
                    continue  # the trade would restore more: perhaps the answer avoids a restore
                if subtopology[t] != subtopology[kept] and (
                        balanced_alike is None or not balanced_alike(traded(assignment, kept, t), kept, t)):
                    continue
                out.append(Exchange(member=m.id, kept=kept, holder=holder, taken=t, owner=owner))
                break
    return tuple(out)
