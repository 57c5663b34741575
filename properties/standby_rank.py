"""``caught-up-standby``: no standby must restore while a caught-up member holds no copy (KIP-441 requirement 2).

KIP-441 "Assignment Algorithm", 2: "As a second priority, the algorithm must assign standby
tasks to the next-most-caught-up instances." Ranks as in "Computing the most-caught-up
instances" (:mod:`rebalproof.model.ranking`: lag floored at ``acceptable_recovery_lag``, so any
lag within it ranks 0, "caught up"; no local state ranks last).

What is judged is each standby slot (as many as ``standby-count`` counts, labels aside): it is a
violation when a slot must be filled by a replica that is not caught up, new or kept from going
in, while another member, caught up on the task, is left without any copy of it: the assignor
put (or left) the replica on a member that must restore, where one that need not was free.

Which replicas are the standbys and which the extra copies (warmups) is read the kindest way
the counts allow: caught-up replicas first, then the ones kept from going in, and only then the
new ones that must restore. A new replica behind is a standby only when the slots cannot be
filled otherwise: it may be the warmup of a move (KIP-441 "Iterative Balancing Assignments",
"extra" standby replicas on "the destination instances") beside a kept standby. So neither the
ids (a tie-break) nor the ranks among members that are all behind decide the verdict.

Abstraction choices:

- *Only against caught-up members.* A kept standby that fell behind is judged too (red team 3:
  a standby kept far behind while a caught-up member held no copy passed; KIP-441 requirement 2
  asks for "the next-most-caught-up instances" whatever was there before). Between members that
  are both behind, the seeds' ranks order them, but Kafka's own assignor only tells caught up
  from not (its standby task movements): the stricter reading would judge a choice a correct
  production assignor makes.
- *Leaving members*, unknown to KIP-441, are read both ways and the better verdict stands: as
  ordinary members, or as shutting down (neither candidates nor standbys).
- Tasks without exactly one active in the group are ``one-active``'s business and skipped.

Examples
--------
>>> from rebalproof.model.assignment import Assignment
>>> from rebalproof.model.view import Config, Member, RebalanceInput, Task
>>> view = RebalanceInput(config=Config(num_standby_replicas=1), tasks=(Task(id="0_0"),),
...     members=(Member(id="I1", active=("0_0",), lags={"0_0": 0}), Member(id="I2", lags={"0_0": 0}), Member(id="I3")))
>>> caught_up_standby(view, Assignment.build({"I1": {"active": ["0_0"]}, "I2": {}, "I3": {"standby": ["0_0"]}})).message
'task 0_0 gets a new standby on I3 (no local state), but I2 is caught up on it (rank 0) and holds no copy'
>>> caught_up_standby(view, Assignment.build({"I1": {"active": ["0_0"]}, "I2": {"standby": ["0_0"]}, "I3": {}})).status.value
'holds'
"""

from __future__ import annotations

from rebalproof.model.assignment import Assignment
from rebalproof.model.names import sorted_ids
from rebalproof.model.ranking import rank
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.common import (
    holders_in_group, plural, problems_verdict, replica_holders, required_standbys, staying_members, standby_allowance, words,
)
from rebalproof.properties.lag import rank_text

__all__ = ["caught_up_standby"]


def _which(view: RebalanceInput, task_id: str, members: tuple[str, ...], forced: int) -> str:
    """``I3 (rank 50000)`` or ``each of I3 and I4 (I3: rank 1, I4: no local state)``: the ``forced``
    standbys that must restore among ``members``, with their ranks."""
    if len(members) == 1:
        return f"{members[0]} ({rank_text(rank(view, members[0], task_id))})"
    ranks = ", ".join(f"{m}: {rank_text(rank(view, m, task_id))}" for m in members)
    return f"{'each' if forced == len(members) else 'one'} of {words(members)} ({ranks})"


def _problems(view: RebalanceInput, assignment: Assignment, members: tuple[str, ...], allowance: int):
    """(problems, tasks, members named, new standbys judged) with ``members`` the group of the reading."""
    problems, tasks, named, judged = [], [], [], 0
    group = set(members)
    for task_id in view.stateful_task_ids:
        if len(holders_in_group(view, assignment, task_id, "active")) != 1:
            continue
        copies = set(holders_in_group(view, assignment, task_id))
        replicas = [m for m in replica_holders(view, assignment, task_id) if m in group]
        caught = [m for m in replicas if rank(view, m, task_id) == 0]
        kept = [m for m in replicas if m not in caught and task_id in view.member(m).copies]
        new = sorted_ids(m for m in replicas if m not in caught and m not in kept)
        slots = min(allowance, len(replicas))
        # the kindest split the counts allow: caught-up replicas, then kept ones, fill the slots
        judged += sum(1 for m in caught[:slots] if task_id not in view.member(m).copies)
        behind = slots - len(caught)  # standby slots a replica that must restore fills
        if behind <= 0:
            continue
        judged += behind
        idle = sorted_ids(m for m in group if m not in copies and rank(view, m, task_id) == 0)
        if not idle:
            continue
        one = len(idle) == 1
        forced_new = behind - len(kept)
        if forced_new > 0:
            said, who = f"gets a new standby on {_which(view, task_id, new, forced_new)}", new
        else:
            who = sorted_ids(kept)
            said = f"keeps a standby on {_which(view, task_id, who, behind)}, which must restore"
        problems.append(
            f"task {task_id} {said}, but {words(idle)} "
            f"{'is' if one else 'are'} caught up on it (rank 0) and {'holds' if one else 'hold'} no copy"
        )
        tasks.append(task_id)
        named.extend([*who, *idle])
    return problems, tasks, named, judged


def caught_up_standby(view: RebalanceInput, assignment: Assignment):
    """No standby, new or kept, on a member that must restore while a caught-up member holds no copy (module doc)."""
    found = _problems(view, assignment, view.member_ids, standby_allowance(view))
    if found[0] and len(staying_members(view)) < len(view.members):
        shutting = _problems(view, assignment, staying_members(view), required_standbys(view))
        if not shutting[0]:
            found = shutting
    problems, tasks, named, judged = found
    return problems_verdict(
        "caught-up-standby", problems, tasks, named,
        f"{plural(judged, 'new standby')} judged; none on a member that must restore while a caught-up one holds no copy",
        measure={"new_standbys": judged},
    )
