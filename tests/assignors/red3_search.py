"""Red team round 3: a KIP-441 assignor by exact search in two stages, usable as ``py:`` or ``exec:``.

``exec:python3 tests/assignors/red3_search.py`` reads one RebalanceInput JSON line per call on
stdin and answers one Assignment line on stdout.

Seed 002 (KIP-441), read differently from ``red3_flow`` on purpose:

- "Stateless tasks are not represented at all in StatefulTasksToRankedCandidates ... the
  assignor just packs the stateless tasks into the cluster to achieve the best balance it can
  with respect to the assignments of stateful tasks (which are specified to have higher
  assignment priority)": stage 1 plans the stateful actives alone (balanced among themselves,
  per subtopology and in total), stage 2 packs the stateless ones around them so that the
  whole is balanced; only where stage 2 cannot, both are planned together;
- each stage is a depth-first branch and bound over balanced layouts (exact, not a flow), its
  objective lexicographic: first the number of stateful tasks whose planned instance is not
  caught up (each one a warmup to make), then the moves;
- warmups are labelled ``standby``, as Kafka labels them (seed 002 "Rejected Alternatives":
  "it turns out to cause more conflicts that it solves"), and made only on instances holding
  no copy of the task ("to move a task to an instance that has neither the active nor any
  standby replicas of that task assigned"); an instance holding a standby already warms up;
- ties between equally caught-up instances go to the lowest id, tasks are planned in id order;
- a probing rebalance is asked whenever some task is not yet where the plan puts it.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.assignors.red3_common import View, empty_answer, fair_bounds, finish, natural, subtopology  # noqa: E402

WARM = 1000  # a planned instance that is not caught up costs a warmup


def _cost(view: View, task: str, member: str, best: int) -> int:
    if not view.stateful[task]:
        return 0 if view.owner.get(task) == member else 1
    r = view.rank(task, member)
    if r == best:
        return 0 if view.owner.get(task) == member else 1
    return WARM + (0 if view.lag(task, member) is not None else 1)


def _search(view: View, members, tasks, bounds_total, bounds_sub, fixed_total=None, budget=200000):
    """Branch and bound: tasks -> members within [lo, hi] per member (in total) and per
    (member, subtopology); least total cost. ``fixed_total`` counts tasks already placed."""
    fixed_total = fixed_total or defaultdict(int)
    best_of = {t: view.best_rank(t, members) if view.stateful[t] else 0 for t in tasks}
    cost = {(t, m): _cost(view, t, m, best_of[t]) for t in tasks for m in members}
    order = sorted(tasks, key=natural)
    # tasks with fewer cheap options first
    order.sort(key=lambda t: sorted(cost[(t, m)] for m in members)[:2])
    cand = {t: sorted(members, key=lambda m: (cost[(t, m)], natural(m))) for t in order}
    subs = sorted({subtopology(t) for t in tasks})
    remaining_sub = defaultdict(int)
    for t in tasks:
        remaining_sub[subtopology(t)] += 1
    count = defaultdict(int)      # member -> tasks (placed here + fixed)
    count_s = defaultdict(int)    # (member, sub) -> tasks
    for m in members:
        count[m] = fixed_total[m]
    cheapest_rest = [0] * (len(order) + 1)
    for i in range(len(order) - 1, -1, -1):
        cheapest_rest[i] = cheapest_rest[i + 1] + cost[(order[i], cand[order[i]][0])]
    best = [None, None]
    layout = {}
    nodes = [0]

    def feasible_lower(i):
        left = len(order) - i
        need = sum(max(0, bounds_total[m][0] - count[m]) for m in members)
        if need > left:
            return False
        for s in subs:
            need_s = sum(max(0, bounds_sub[(m, s)][0] - count_s[(m, s)]) for m in members)
            if need_s > remaining_sub[s]:
                return False
        return True

    def dfs(i, acc):
        nodes[0] += 1
        if nodes[0] > budget:
            return
        if best[0] is not None and acc + cheapest_rest[i] >= best[0]:
            return
        if not feasible_lower(i):
            return
        if i == len(order):
            best[0], best[1] = acc, dict(layout)
            return
        t = order[i]
        s = subtopology(t)
        remaining_sub[s] -= 1
        for m in cand[t]:
            if count[m] + 1 > bounds_total[m][1] or count_s[(m, s)] + 1 > bounds_sub[(m, s)][1]:
                continue
            count[m] += 1
            count_s[(m, s)] += 1
            layout[t] = m
            dfs(i + 1, acc + cost[(t, m)])
            del layout[t]
            count[m] -= 1
            count_s[(m, s)] -= 1
        remaining_sub[s] += 1

    dfs(0, 0)
    return best[1]


def _bounds(view, members, tasks, n_total=None, capacity=None):
    capacity = capacity or view.capacity
    cap = sum(capacity[m] for m in members)
    n = len(tasks) if n_total is None else n_total
    total = {m: fair_bounds(n, capacity[m], cap) for m in members}
    per_sub = defaultdict(int)
    for t in tasks:
        per_sub[subtopology(t)] += 1
    sub = {(m, s): fair_bounds(k, capacity[m], cap) for m in members for s, k in per_sub.items()}
    return total, sub


def target_assignment(view: View, members, stateless_capacity=None) -> dict:
    """``stateless_capacity`` (threads per member for packing the stateless tasks) is a hook
    for a seeded bug (``red3_seeded``); by default each member's own capacity."""
    stateful = view.stateful_tasks()
    stateless = view.stateless_tasks()
    tot_f, sub_f = _bounds(view, members, stateful)
    first = _search(view, members, stateful, tot_f, sub_f) if stateful else {}
    if first is not None and stateless:
        tot_all, _ = _bounds(view, members, view.tasks, capacity=stateless_capacity)
        _, sub_l = _bounds(view, members, stateless, capacity=stateless_capacity)
        placed = defaultdict(int)
        for m in first.values():
            placed[m] += 1
        second = _search(view, members, stateless, tot_all, sub_l, fixed_total=placed)
        if second is not None:
            first.update(second)
            return first
        first = None
    if first is not None:
        return first
    tot_all, sub_all = _bounds(view, members, view.tasks)
    return _search(view, members, view.tasks, tot_all, sub_all)


def plan(view: View, members, target: dict):
    answer = empty_answer(view.members)
    active_of, pending = {}, []
    for t in sorted(view.tasks, key=natural):
        dest = target[t]
        if not view.stateful[t]:
            active_of[t] = dest
            continue
        best = view.best_rank(t, members)
        if view.rank(t, dest) == best:
            active_of[t] = dest
            continue
        ready = sorted((m for m in members if view.rank(t, m) == best), key=natural)
        owner = view.owner.get(t)
        active_of[t] = owner if owner in ready else ready[0]
        pending.append((t, dest))
    for t, m in active_of.items():
        answer[m]["active"].append(t)
    k = min(view.num_standbys, len(members) - 1)
    load = defaultdict(int)
    copies = defaultdict(set)
    for t in sorted(view.stateful_tasks(), key=natural):
        cands = [m for m in sorted(members, key=natural) if m != active_of[t]]
        cands.sort(key=lambda m: (view.rank(t, m), 0 if view.holds_copy(t, m) else 1, load[m] / view.capacity[m]))
        for m in cands[:k]:
            copies[t].add(m)
            load[m] += 1
            answer[m]["standby"].append(t)
    budget = view.max_warmups
    for t, dest in sorted(pending, key=lambda p: natural(p[0])):
        if dest in copies[t] or budget == 0:
            continue
        copies[t].add(dest)
        answer[dest]["standby"].append(t)  # a warmup, labelled as Kafka labels it
        budget -= 1
    return answer, bool(pending)


def assign(inp: dict) -> dict:
    view = View(inp)
    members = list(view.members)
    target = target_assignment(view, members)
    answer, probing = plan(view, members, target)
    return finish(answer, probing)


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        sys.stdout.write(json.dumps(assign(json.loads(line)), separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
