"""A small KIP-441 assignor: the worked example of a correct implementation, in plain Python.

It speaks the contract of rebalproof's external assignors (docs/DESIGN.md "Contracts"):

- as ``py:ha_assignor:assign`` (with ``examples/`` on the Python path): a dict in, a dict out;
- as ``exec:python3 examples/ha_assignor.py``: one RebalanceInput per line on stdin, one
  Assignment per line on stdout.

It imports nothing from rebalproof on purpose: it stands for *your* implementation. Its twin
``ha_assignor.js`` follows the same steps line by line and gives the same answers.

The phases (KIP-441 "Assignment Algorithm", requirements 1-6):

1. **Keep a settled assignment.** If every task has an active on a non-leaving member, each
   stateful active is on a most-caught-up member, and the actives are balanced (instance
   balance by capacity and subtopology balance, KIP-441 "Defining balance"), the actives stay
   exactly as they are (requirement 5, convergence).
2. **Otherwise plan a balanced target.** Subtopology by subtopology (those with the fewest tasks
   first: capacities constrain them most), the tasks are water-filled over the members: each
   next task goes to the member with the fewest of that subtopology's tasks per thread, then the fewest tasks in all per thread, then the one
   that held more of them before (stickiness, requirement 6), then the smallest id. Members
   keep the tasks they held up to their share; the rest go to the most caught-up member with
   room. Where that leaves the totals more than one task per thread apart (unequal
   capacities), tasks move one at a time from the busiest member per thread to the one with
   the most room until they are within one.
3. **Actives only to caught-up members** (requirement 1). A stateful task whose target is not
   among its most-caught-up members stays with its owner (or another most-caught-up member)
   and the target gets a warmup (requirement 3), at most ``max_warmup_replicas`` in all; the
   answer then asks for a probing rebalance.
4. **Standbys** (requirement 2): ``min(num_standby_replicas, members - 1)`` per stateful task, to
   the next-most-caught-up members, preferring those that already hold one, then the warmup
   target, then the least loaded.
5. **Stateless tasks stay put** (requirement 6): a stateless task the plan moved goes back to its
   owner whenever that leaves the answer no worse balanced (actives, its subtopology, all
   copies: within one and spread), until no such task is left.

Ranks follow KIP-441 "Computing the most-caught-up instances": a lag within
``acceptable_recovery_lag`` ranks 0; no local state ranks last.
"""

from __future__ import annotations

import json
import re
import sys

__all__ = ["assign", "main"]

NO_STATE = float("inf")
_RUNS = re.compile(r"(\d+)")


def id_key(identifier: str) -> tuple:
    """Natural order: runs of digits compare as numbers (I2 < I10), ties by the plain string."""
    parts = [p for p in _RUNS.split(identifier) if p != ""]
    return (tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts), identifier)


def subtopology(task_id: str) -> str:
    return task_id.split("_", 1)[0]


def within_one(counts: dict, caps: dict) -> bool:
    """No single move of a task from one member to another leaves the receiver less loaded per thread."""
    for i in counts:
        if counts[i] == 0:
            continue
        for j in counts:
            if i != j and counts[i] * caps[j] > (counts[j] + 1) * caps[i]:
                return False
    return True


def assign(request: dict) -> dict:
    """One RebalanceInput (a dict, as in the contract) to one Assignment (a dict)."""
    config = request.get("config", {})
    standbys_wanted = config.get("num_standby_replicas", 0)
    recovery_lag = config.get("acceptable_recovery_lag", 10000)
    warmup_budget = config.get("max_warmup_replicas", 2)

    tasks = sorted(request.get("tasks", []), key=lambda t: id_key(t["id"]))
    task_ids = [t["id"] for t in tasks]
    stateful = {t["id"]: t.get("stateful", True) for t in tasks}
    members = sorted(request.get("members", []), key=lambda m: id_key(m["id"]))
    ids = [m["id"] for m in members]
    by_id = {m["id"]: m for m in members}
    eligible = [m["id"] for m in members if not m.get("leaving", False)] or ids
    cap = {m["id"]: m.get("capacity", 1) for m in members}
    if not ids:
        return {"assignment": {}, "probing_rebalance": False}

    def lag(member: str, task: str) -> float:
        m = by_id[member]
        lags = m.get("lags", {})
        if task in lags:
            return lags[task]
        return 0 if task in m.get("active", []) else NO_STATE

    def rank(member: str, task: str) -> float:
        if not stateful[task]:
            return 0
        value = lag(member, task)
        return 0 if value <= recovery_lag else value

    best_rank = {t: min(rank(m, t) for m in eligible) for t in task_ids} if eligible else {}
    owner = {}
    for m in eligible:
        for t in by_id[m].get("active", []):
            if t in stateful and t not in owner:
                owner[t] = m
    subs: dict[str, list[str]] = {}
    for t in task_ids:
        subs.setdefault(subtopology(t), []).append(t)
    sub_order = sorted(subs, key=lambda s: (len(subs[s]), id_key(s)))  # the most constrained first

    # 1. keep a settled assignment
    def settled() -> bool:
        if any(t not in owner for t in task_ids):
            return False
        if any(stateful[t] and rank(owner[t], t) != best_rank[t] for t in task_ids):
            return False
        totals = {m: sum(1 for t in task_ids if owner[t] == m) for m in eligible}
        if not within_one(totals, cap):
            return False
        return all(within_one({m: sum(1 for t in subs[s] if owner[t] == m) for m in eligible}, cap) for s in subs)

    # 2. plan a balanced target
    def plan() -> dict:
        target: dict[str, str] = {}
        load = {m: 0 for m in eligible}
        for s in sub_order:
            held = {m: sum(1 for t in subs[s] if owner.get(t) == m) for m in eligible}
            share = {m: 0 for m in eligible}
            for _ in subs[s]:
                chosen = min(
                    eligible,
                    key=lambda m: ((share[m] + 1) / cap[m], (load[m] + 1) / cap[m], 0 if held[m] > share[m] else 1, id_key(m)),
                )
                share[chosen] += 1
                load[chosen] += 1
            room = dict(share)
            for m in eligible:
                mine = sorted((t for t in subs[s] if owner.get(t) == m), key=lambda t: (rank(m, t), id_key(t)))
                for t in mine[: room[m]]:
                    target[t] = m
                room[m] -= min(room[m], len(mine))
            for t in subs[s]:
                if t in target:
                    continue
                chosen = min((m for m in eligible if room[m] > 0), key=lambda m: (rank(m, t), id_key(m)))
                target[t] = chosen
                room[chosen] -= 1
        # instance balance by capacity: filling subtopology by subtopology can leave a big member
        # more than one task per thread ahead (capacities 2, 1, 1 and four tasks: 3, 1, 0). Move
        # one task at a time from the busiest member per thread to the one with the most room,
        # from the subtopology where the receiver is furthest behind, the receiver's most caught-up
        # task first and one the giver did not own before (stickiness), until the totals are within one
        for _ in range(len(task_ids) * len(eligible)):
            totals = {m: sum(1 for t in task_ids if target[t] == m) for m in eligible}
            if within_one(totals, cap):
                break
            giver = min(eligible, key=lambda m: (-totals[m] / cap[m], id_key(m)))
            taker = min(eligible, key=lambda m: ((totals[m] + 1) / cap[m], id_key(m)))

            def behind(t: str) -> tuple:
                mine = sum(1 for x in subs[subtopology(t)] if target[x] == giver)
                theirs = sum(1 for x in subs[subtopology(t)] if target[x] == taker)
                return ((theirs + 1) / cap[taker] - mine / cap[giver], rank(taker, t), 1 if owner.get(t) == giver else 0, id_key(t))

            target[min((t for t in task_ids if target[t] == giver), key=behind)] = taker
        return target

    target = dict(owner) if settled() else plan()

    # 3. actives only to most-caught-up members; warmups on the targets they wait for
    active: dict[str, str] = {}
    count = {m: 0 for m in eligible}
    moves: list[tuple[str, str]] = []
    for t in task_ids:
        goal = target[t]
        if stateful[t] and rank(goal, t) != best_rank[t]:
            current = owner.get(t)
            if current is not None and rank(current, t) == best_rank[t]:
                goal_now = current
            else:
                goal_now = min(
                    (m for m in eligible if rank(m, t) == best_rank[t]),
                    key=lambda m: ((count[m] + 1) / cap[m], id_key(m)),
                )
            moves.append((t, goal))
            goal = goal_now
        active[t] = goal
        count[goal] += 1

    # 4. standbys to the next-most-caught-up members
    wanted = min(standbys_wanted, len(eligible) - 1)
    copies = dict(count)
    standby: dict[str, list[str]] = {m: [] for m in ids}
    move_target = dict(moves)
    for t in task_ids:
        if not stateful[t] or wanted <= 0:
            continue
        candidates = sorted(
            (m for m in eligible if m != active[t]),
            key=lambda m: (
                rank(m, t),
                0 if t in by_id[m].get("standby", []) else 1,
                0 if move_target.get(t) == m else 1,
                (copies[m] + 1) / cap[m],
                id_key(m),
            ),
        )
        for m in candidates[:wanted]:
            standby[m].append(t)
            copies[m] += 1

    warmup: dict[str, list[str]] = {m: [] for m in ids}
    for t, goal in moves:
        if warmup_budget <= 0:
            break
        if t in standby[goal]:
            continue
        warmup[goal].append(t)
        warmup_budget -= 1

    # 5. stateless tasks stay with their owner unless moving them improves balance (requirement 6)
    counted = [m for m in ids if not by_id[m].get("leaving", False)]

    def spread(counts: dict) -> float:
        loads = [counts[m] / cap[m] for m in counts]
        return max(loads) - min(loads) if loads else 0.0

    def measure(act: dict, sub: str) -> tuple:
        actives = {m: 0 for m in counted}
        per_sub = {s: {m: 0 for m in counted} for s in subs}
        for t, m in act.items():
            if m in actives:
                actives[m] += 1
                per_sub[subtopology(t)][m] += 1
        held = {m: actives[m] + len(standby[m]) for m in counted}
        return (
            within_one(actives, cap), all(within_one(per_sub[s], cap) for s in subs), within_one(held, cap),
            spread(actives), spread(per_sub[sub]), spread(held),
        )

    def no_worse(kept: dict, answer: dict, sub: str) -> bool:
        k, a = measure(kept, sub), measure(answer, sub)
        return all(k[i] or not a[i] for i in range(3)) and all(k[i] <= a[i] for i in range(3, 6))

    changed = True
    while changed:
        changed = False
        for t in task_ids:
            if stateful[t] or t not in owner or active[t] == owner[t]:
                continue
            kept = dict(active)
            kept[t] = owner[t]
            if no_worse(kept, active, subtopology(t)):
                active = kept
                changed = True

    out = {m: {"active": [], "standby": standby[m], "warmup": warmup[m]} for m in ids}
    for t in task_ids:
        out[active[t]]["active"].append(t)
    return {"assignment": out, "probing_rebalance": bool(moves)}


def main() -> int:
    """``exec:`` mode: answer each line of stdin with one line on stdout."""
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(assign(json.loads(line))) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
