"""This round's placement of ``ha``: what the leader can assign *now*, moving towards the target.

KIP-441 "Proposed Assignment/Rebalance Algorithm": "the leader assigns active tasks only to
instances that are ready to begin processing them immediately"; movements happen by giving
the destination an extra copy and "rebalancing once those tasks are up to date". The
phases, in priority order (KIP-441 "Assignment Algorithm" #1-#4):

- :func:`place_actives` (#1) -- each stateful active on a most-caught-up member: the target
  member when it is one, else the current owner, a target standby member, then the lowest id.
- :func:`place_standbys` (#2) -- :func:`~rebalproof.model.assignors.ha_target.standby_count`
  standbys on the next-most-caught-up members: by rank, ties to target members, then to
  current holders, then id. A cold standby on a target member is a *required* copy, not an
  extra one.
- :func:`place_warmups` (#3) -- target members left without a copy get a warmup, at most
  ``max_warmup_replicas`` in all: copies already being restored first (so a restore in
  progress is never abandoned for a new one), then moves of actives before moves of standbys,
  then least lag, then id.
- :func:`pack_stateless` (#4, #6) -- stateless tasks last, balanced around this round's
  stateful actives, sticky to their current owners.

Examples
--------
>>> from rebalproof.model.view import Config, Member, RebalanceInput, Task
>>> from rebalproof.model.assignors.ha_target import plan_target
>>> view = RebalanceInput(
...     config=Config(num_standby_replicas=1),
...     tasks=tuple(Task(id=t) for t in ("T1", "T2", "T3")),
...     members=(Member(id="I1", active=("T1", "T3"), standby=("T2",), lags={"T1": 0, "T2": 0, "T3": 0}),
...              Member(id="I2", active=("T2",), standby=("T1", "T3"), lags={"T1": 0, "T2": 0, "T3": 0}),
...              Member(id="I3")))
>>> target = plan_target(view)
>>> actives = place_actives(view, target)
>>> standbys = place_standbys(view, actives, target)
>>> actives["T3"], standbys["T3"], place_warmups(view, actives, standbys, target)
('I1', ('I2',), {'T1': ('I3',), 'T2': (), 'T3': ('I3',)})
"""

from __future__ import annotations

from rebalproof.model.assignors.ha_flow import lexicographic_costs, quota_box, transport
from rebalproof.model.assignors.ha_target import Target, round_robin, standby_count
from rebalproof.model.names import id_key, subtopology_of
from rebalproof.model.ranking import lag_of, most_caught_up, rank
from rebalproof.model.view import RebalanceInput

__all__ = ["place_actives", "place_standbys", "place_warmups", "pack_stateless"]


def place_actives(view: RebalanceInput, target: Target) -> dict[str, str]:
    """Stateful task id -> this round's active member, always a most-caught-up one (KIP-441 #1)."""
    placed = {}
    for task_id in view.stateful_task_ids:
        best = most_caught_up(view, task_id)
        goal = target.active_of(task_id)
        if goal in best:
            placed[task_id] = goal
            continue
        owners = view.owners(task_id)
        standbys = target.standbys_of(task_id)
        placed[task_id] = min(best, key=lambda m: (m not in owners, m not in standbys, id_key(m)))
    return placed


def place_standbys(view: RebalanceInput, actives: dict[str, str], target: Target) -> dict[str, tuple[str, ...]]:
    """Stateful task id -> this round's standby members, the next most caught up (KIP-441 #2)."""
    count = standby_count(view)
    placed = {}
    for task_id in view.stateful_task_ids:
        goal = set(target.holders(task_id))
        candidates = [m for m in view.member_ids if m != actives[task_id]]
        candidates.sort(
            key=lambda m: (
                rank(view, m, task_id),
                m not in goal,
                task_id not in view.member(m).copies,
                id_key(m),
            )
        )
        placed[task_id] = tuple(sorted(candidates[:count], key=id_key))
    return placed


def place_warmups(
    view: RebalanceInput,
    actives: dict[str, str],
    standbys: dict[str, tuple[str, ...]],
    target: Target,
) -> dict[str, tuple[str, ...]]:
    """Stateful task id -> warmup members: target members with no copy yet, within the budget (KIP-441 #3).

    Every warmup is an extra copy (beyond the active and the required standbys), so their
    number is the task's count against ``max_warmup_replicas``.
    """
    wanted = []
    for task_id in view.stateful_task_ids:
        covered = {actives[task_id], *standbys[task_id]}
        for member in target.holders(task_id):
            if member in covered:
                continue
            wanted.append(
                (
                    task_id not in view.member(member).copies,
                    member != target.active_of(task_id),
                    lag_of(view, member, task_id),
                    id_key(task_id),
                    id_key(member),
                    task_id,
                    member,
                )
            )
    wanted.sort()
    chosen = wanted[: view.config.max_warmup_replicas]
    placed: dict[str, list[str]] = {t: [] for t in view.stateful_task_ids}
    for *_, task_id, member in chosen:
        placed[task_id].append(member)
    return {t: tuple(sorted(ms, key=id_key)) for t, ms in placed.items()}


def pack_stateless(view: RebalanceInput, actives: dict[str, str]) -> dict[str, str]:
    """Stateless task id -> member, packed around this round's stateful actives (KIP-441 #4, #6).

    Bounds, first feasible wins: (1) the KIP-441 balance box of all tasks, less what the
    stateful actives already fill, overall and per subtopology -- feasible whenever the
    stateful actives allow a balanced result; (2) water-filling on top of the stateful
    actives, overall and per subtopology; (3) water-filling overall only. Within the bounds
    a task stays with its current owner, else goes to its round-robin member, else the
    unique tie-break of :func:`~rebalproof.model.assignors.ha_flow.lexicographic_costs`.
    """
    stateless = view.stateless_task_ids
    members = view.member_ids
    if not stateless or not members:
        return {}
    caps = {m.id: m.capacity for m in view.members}
    order = round_robin(view)
    arcs, tiers = [], []
    for task_id in stateless:
        owners = view.owners(task_id)
        for member in members:
            arcs.append((task_id, member))
            tiers.append((int(member not in owners), int(members[order[task_id] % len(members)] != member)))
    costs = lexicographic_costs(tiers, flow=len(stateless))
    priced = [(t, m, c) for (t, m), c in zip(arcs, costs)]
    units = {t: 1 for t in stateless}
    group_of = {t: subtopology_of(t) for t in stateless}
    held = {m: 0 for m in members}
    held_in: dict[tuple[str, str], int] = {}
    for task_id, member in actives.items():
        held[member] += 1
        key = (subtopology_of(task_id), member)
        held_in[key] = held_in.get(key, 0) + 1
    groups = sorted(set(group_of.values()), key=id_key)
    size = {g: sum(1 for t in view.task_ids if subtopology_of(t) == g) for g in groups}
    fresh = {g: sum(1 for t in stateless if group_of[t] == g) for g in groups}

    def less(box, start):
        if any(start.get(m, 0) > hi for m, (lo, hi) in box.items()):
            return None
        return {m: (max(0, lo - start.get(m, 0)), hi - start.get(m, 0)) for m, (lo, hi) in box.items()}

    exact_members = less(quota_box(len(view.tasks), caps), held)
    exact_groups: dict | None = {}
    for g in groups:
        start = {m: held_in.get((g, m), 0) for m in members}
        box = less(quota_box(size[g], caps), start)
        if box is None:
            exact_groups = None
            break
        exact_groups.update({(g, m): b for m, b in box.items()})
    filled_members = quota_box(len(stateless), caps, start=held)
    filled_groups = {
        (g, m): b
        for g in groups
        for m, b in quota_box(fresh[g], caps, start={m: held_in.get((g, m), 0) for m in members}).items()
    }
    attempts = []
    if exact_members is not None and exact_groups is not None:
        attempts.append((exact_members, exact_groups))
    attempts += [(filled_members, filled_groups), (filled_members, None)]
    for member_bounds, group_bounds in attempts:
        if group_bounds is None:
            placed = transport(units, priced, member_bounds)
        else:
            placed = transport(units, priced, member_bounds, group_of=group_of, group_bounds=group_bounds)
        if placed is not None:
            return {t: placed[t][0] for t in stateless}
    raise AssertionError("water-filling overall is always feasible")
