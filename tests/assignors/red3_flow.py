"""Red team round 3: a KIP-441 assignor solved as a min-cost flow (networkx), capacity-aware.

Read from seed 002 (KIP-441) alone:

- "the assignment algorithm creates as balanced an assignment as possible while strictly
  assigning stateful tasks only among the most-caught-up instances. It also plans task
  movements to gradually improve assignment balance over time": a *target* is computed as a
  balanced assignment of every active task (stateful and stateless) with least movement cost,
  by one min-cost flow with lower bounds (tasks -> (instance, subtopology) -> instance -> sink),
  balance read per stream thread (capacity);
- "In each rebalance, the leader assigns active tasks only to instances that are ready to
  begin processing them immediately": a stateful task goes to its target only when the target
  is most caught up; otherwise it stays on a most-caught-up instance (its owner where it is
  one) and the target gets a warmup ("extra" standby), at most max_warmup_replicas of them,
  and a probing rebalance is asked;
- "the algorithm must assign standby tasks to the next-most-caught-up instances": standbys by
  rank, then by who already holds a copy, then by standby load per thread;
- stateless tasks go to their target at once (no notion of catching up).

Choices made on purpose where the seed leaves them open (different from the obvious ones):
members are laid out in the flow in descending id order, ties of standby candidates are
broken by the *highest* id, tasks are visited in descending id order, warmups already in
progress keep their budget first, and the old owner's copy is never kept beyond the standbys.

``assign``: balance per member by its fair share of each group (floor / ceil of n * c / C).
``assign_per_thread``: every stream thread within one of every other (c * floor(n / C) ..
c * ceil(n / C)), for each subtopology and in total.
"""

from __future__ import annotations

from collections import defaultdict

import networkx as nx

from tests.assignors.red3_common import (
    View, empty_answer, fair_bounds, finish, natural, per_thread_bounds, subtopology,
)


def _cost(view: View, task: str, member: str, best: int) -> int:
    if not view.stateful[task]:
        return 0 if view.owner.get(task) == member else 1
    r = view.rank(task, member)
    if r == best:
        return 0 if view.owner.get(task) == member else 10
    if view.lag(task, member) is not None:
        return 20
    return 40


def target_assignment(view: View, members, bounds=fair_bounds, sub_bounds=None) -> dict:
    """A balanced placement of every active task with least movement cost: task -> member."""
    total_cap = sum(view.capacity[m] for m in members)
    groups = defaultdict(list)
    for t in view.tasks:
        groups[subtopology(t)].append(t)
    n = len(view.tasks)
    g = nx.DiGraph()
    demand = defaultdict(int)

    def edge(u, v, lo, hi, w=0):
        g.add_edge(u, v, capacity=hi - lo, weight=w)
        demand[u] += lo
        demand[v] -= lo

    demand["sink"] += n
    for t in sorted(view.tasks, key=natural, reverse=True):
        demand[("t", t)] -= 1
    for m in sorted(members, key=natural, reverse=True):
        lo, hi = bounds(n, view.capacity[m], total_cap)
        edge(("m", m), "sink", lo, hi)
        for s in sorted(groups, key=natural, reverse=True):
            lo, hi = (sub_bounds or bounds)(len(groups[s]), view.capacity[m], total_cap)
            edge(("ms", m, s), ("m", m), lo, hi)
    best = {t: view.best_rank(t, members) for t in view.tasks}
    for t in sorted(view.tasks, key=natural, reverse=True):
        for m in sorted(members, key=natural, reverse=True):
            g.add_edge(("t", t), ("ms", m, subtopology(t)), capacity=1, weight=_cost(view, t, m, best[t]))
    for node, d in demand.items():
        g.add_node(node)
        g.nodes[node]["demand"] = d
    flow = nx.min_cost_flow(g)
    target = {}
    for t in view.tasks:
        for (_, m, _s), f in flow[("t", t)].items():
            if f:
                target[t] = m
    return target


def plan(view: View, members, target: dict, *, standby_key=None, warming=None, costs_budget=None,
         standby_tasks=None):
    """The answer for a target: actives, standbys, warmups and the probing flag.

    The keyword hooks exist for the seeded bugs (``red3_seeded``) only."""
    answer = empty_answer(view.members)
    active_of = {}
    pending = []  # (task, destination) moves waiting for a warm destination
    for t in sorted(view.tasks, key=natural, reverse=True):
        dest = target[t]
        if not view.stateful[t]:
            active_of[t] = dest
            continue
        best = view.best_rank(t, members)
        if view.rank(t, dest) == best:
            active_of[t] = dest
            continue
        ready = [m for m in members if view.rank(t, m) == best]
        owner = view.owner.get(t)
        if owner in ready:
            keep = owner
        else:
            holders = [m for m in ready if view.holds_copy(t, m)]
            keep = max(holders or ready, key=natural)
        active_of[t] = keep
        pending.append((t, dest))
    for t, m in active_of.items():
        answer[m]["active"].append(t)

    k = min(view.num_standbys, len(members) - 1)
    standby_load = defaultdict(int)
    standbys = defaultdict(list)
    for t in sorted(standby_tasks or view.stateful_tasks(), key=natural, reverse=True):
        cands = [m for m in sorted(members, key=natural, reverse=True) if m != active_of[t]]
        cands.sort(key=standby_key(t, standby_load) if standby_key else
                   lambda m: (view.rank(t, m), 0 if view.holds_copy(t, m) else 1,
                              standby_load[m] / view.capacity[m]))
        for m in cands[:k]:
            standbys[t].append(m)
            standby_load[m] += 1
            answer[m]["standby"].append(t)

    budget = view.max_warmups
    pending.sort(key=lambda p: natural(p[0]), reverse=True)
    pending.sort(key=lambda p: 0 if view.holds_copy(p[0], p[1]) else 1)  # warmups in progress first
    for t, m in pending:
        if (warming(t, m) if warming else m in standbys[t]):
            continue  # the destination warms up as a standby
        if budget > 0:
            answer[m]["warmup"].append(t)
            if costs_budget is None or costs_budget(t, m):
                budget -= 1
    return answer, bool(pending)


def _assign(inp: dict, bounds) -> dict:
    view = View(inp)
    members = list(view.members)
    target = target_assignment(view, members, bounds)
    answer, probing = plan(view, members, target)
    return finish(answer, probing)


def assign(inp: dict) -> dict:
    return _assign(inp, fair_bounds)


def assign_per_thread(inp: dict) -> dict:
    return _assign(inp, per_thread_bounds)


def assign_every_task_standbys(inp: dict) -> dict:
    """``assign``, with num_standby_replicas standbys for stateless tasks too: seed 002
    requirement 2 reads "All computed assignments must have at least 'num.standby.replicas'
    number of standby replicas for every task"."""
    view = View(inp)
    target = target_assignment(view, view.members)
    answer, probing = plan(view, view.members, target, standby_tasks=view.tasks)
    return finish(answer, probing)


def assign_serial_moves(inp: dict) -> dict:
    """``assign``, moving one task at a time: a new warmup is only made in a rebalance that
    promotes nothing and has no warmup in flight, so moves never overlap. Seed 002:
    max_warmup_replicas is "the maximum number of extra replicas"; "The default setting is
    likely to result in needing multiple balance improvements during probing rebalances over
    time, but the tradeoff is less load on the cluster and the broker"."""
    view = View(inp)
    target = target_assignment(view, view.members)
    answer, probing = plan(view, view.members, target)
    in_flight = any(t in answer[m]["warmup"] for m in view.members for t in view.warmup[m])
    promoted = any(view.owner.get(t) not in (None, m) and t in (view.warmup[m] | view.standby[m])
                   for m in view.members for t in answer[m]["active"])
    new = [(m, t) for m in view.members for t in answer[m]["warmup"] if t not in view.warmup[m]]
    for i, (m, t) in enumerate(new):
        if in_flight or promoted or i > 0:
            answer[m]["warmup"].remove(t)
    return finish(answer, probing)
