"""Flow tools with certificates: one-sided load systems (Hall violators) and bounded min-cost flows (duals).

The active-placement problem (:mod:`rebalproof.solver.placement`) puts *classes* of
interchangeable tasks (``q`` tasks that may go to the members ``hosts``) on members. Three
questions are flows, and each answer comes with a certificate checked here by arithmetic on the
input alone, never by trusting the flow code:

- :func:`fits_under` -- can every task be placed with member ``m`` taking at most ``hi[m]``?
  If not, a *Hall violator*: classes ``X`` with more tasks than their hosts can take.
- :func:`fills_over` -- can every member ``m`` get at least ``lo[m]``? If not, members ``Y``
  that ask for more tasks than the classes able to reach them have.
- :func:`bounded_min_cost` -- a min-cost flow through (group, member) slots with lower and
  upper bounds; its optimality certificate is a set of node *potentials* under which every
  residual arc has non-negative reduced cost (LP duality), checked arc by arc.

Examples
--------
>>> classes = [(2, ("I1",)), (1, ("I1", "I2"))]
>>> fits_under(classes, {"I1": 1, "I2": 5}).ok
False
>>> fits_under(classes, {"I1": 1, "I2": 5}).say()
'2 tasks can only go to I1, which can take 1'
>>> fills_over(classes, {"I1": 0, "I2": 2}).say()
'I2 must get 2 tasks, but only 1 task can go there'
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import networkx as nx

from rebalproof.model.names import sorted_ids

__all__ = ["Cut", "fits_under", "fills_over", "FlowSolution", "bounded_min_cost", "infeasibility_cut", "quick_cut", "deficient_set", "potential_bound", "unusable_arcs"]


def _n(k: int, noun: str = "task") -> str:
    return f"{k} {noun}{'s' if k != 1 else ''}"


def _list(ids) -> str:
    ids = list(sorted_ids(ids))  # natural order: I2 before I10
    if len(ids) > 6:
        return f"{', '.join(ids[:5])} and {len(ids) - 5} more"
    return ids[0] if len(ids) == 1 else f"{', '.join(ids[:-1])} and {ids[-1]}"


@dataclass(frozen=True)
class Cut:
    """Result of a one-sided check: ``ok``, or a checked certificate of why not."""

    ok: bool
    kind: str = ""  # "upper" or "lower"
    tasks: int = 0  # tasks in the violator (upper) / tasks able to reach (lower)
    room: int = 0  # what the members can take (upper) / must get (lower)
    members: tuple[str, ...] = ()

    def say(self) -> str:
        if self.ok:
            return "feasible"
        if self.kind == "upper":
            return f"{_n(self.tasks)} can only go to {_list(self.members)}, which can take {self.room}"
        return f"{_list(self.members)} must get {_n(self.room)}, but only {_n(self.tasks)} can go there"


def _transport(classes, room: dict):
    """Max flow source -> class ``i`` (``q_i``) -> its hosts (unbounded) -> member ``m`` (``room[m]``) -> sink.

    Greedy start, then unit augmenting paths (class -> host -> a class holding units there ...
    -> a member with room left). Returns ``(value, classes, members)``: the classes and members
    on the source side of a minimum cut (reachable in the residual graph); the callers check the
    certificate they derive from it by arithmetic, so this code is not trusted.
    """
    left = {m: max(0, v) for m, v in room.items()}
    rest = [q for q, _ in classes]
    held: dict = {}  # member -> {class index: units}
    for i in sorted(range(len(classes)), key=lambda i: len(classes[i][1])):
        for m in sorted(classes[i][1], key=lambda m: -left.get(m, 0)):
            take = min(rest[i], left.get(m, 0))
            if take > 0:
                rest[i] -= take
                left[m] -= take
                held.setdefault(m, {})[i] = held.get(m, {}).get(i, 0) + take
            if not rest[i]:
                break
    while True:
        starts = [i for i in range(len(classes)) if rest[i] > 0]
        came: dict = {}  # member -> class it was reached from
        back: dict = {i: None for i in starts}  # class -> member it was reached through (None: from the source)
        queue = deque(starts)
        end = None
        while queue and end is None:
            i = queue.popleft()
            for m in classes[i][1]:
                if m in came:
                    continue
                came[m] = i
                if left.get(m, 0) > 0:
                    end = m
                    break
                for j, units in held.get(m, {}).items():
                    if units > 0 and j not in back:
                        back[j] = m
                        queue.append(j)
        if end is None:
            value = sum(q for q, _ in classes) - sum(rest)
            return value, set(back), set(came)
        m = end  # augment one unit along the path back to a class with units left
        left[m] -= 1
        while True:
            i = came[m]
            held.setdefault(m, {})[i] = held.get(m, {}).get(i, 0) + 1
            prev = back[i]
            if prev is None:
                rest[i] -= 1
                break
            held[prev][i] -= 1
            m = prev


def fits_under(classes, hi: dict[str, int]) -> Cut:
    """Whether every task fits with member ``m`` taking at most ``hi[m]``; a checked Hall violator if not.

    Arithmetic certificates and a greedy witness come first; the flow only decides what they do not.
    """
    total = sum(q for q, _ in classes)
    room = {m: max(0, v) for m, v in hi.items()}
    if sum(room.values()) < total:
        return _upper(classes, range(len(classes)), room)
    for i, (q, hosts) in enumerate(classes):
        if q > sum(room.get(m, 0) for m in hosts):
            return _upper(classes, [i], room)
    left = dict(room)
    for q, hosts in sorted(classes, key=lambda c: len(c[1])):  # greedy witness: fullest room first
        for _ in range(q):
            best = max(hosts, key=lambda m: left.get(m, 0))
            if left.get(best, 0) <= 0:
                break
            left[best] -= 1
        else:
            continue
        break
    else:
        return Cut(ok=True)
    value, seen_classes, _ = _transport(classes, room)
    if value >= total:
        return Cut(ok=True)
    return _upper(classes, sorted(seen_classes), room)


def _upper(classes, chosen, room) -> Cut:
    tasks = sum(classes[i][0] for i in chosen)
    reach = sorted({m for i in chosen for m in classes[i][1]})
    can = sum(room.get(m, 0) for m in reach)
    if tasks <= can:  # the certificate must stand on its own
        raise AssertionError("flow cut does not certify infeasibility")
    return Cut(ok=False, kind="upper", tasks=tasks, room=can, members=tuple(reach))


def fills_over(classes, lo: dict[str, int]) -> Cut:
    """Whether every member ``m`` can get at least ``lo[m]`` tasks; a checked deficient member set if not.

    Arithmetic certificates and a greedy witness come first; the flow only decides what they do not.
    """
    want = {m: v for m, v in lo.items() if v > 0}
    if not want:
        return Cut(ok=True)
    if sum(want.values()) > sum(q for q, hosts in classes if any(m in want for m in hosts)):
        return _lower(classes, sorted(want), want)
    for m in want:
        if want[m] > sum(q for q, hosts in classes if m in hosts):
            return _lower(classes, [m], want)
    short = dict(want)
    for q, hosts in sorted(classes, key=lambda c: len(c[1])):  # greedy witness: neediest member first
        for _ in range(q):
            best = max(hosts, key=lambda m: short.get(m, 0))
            if short.get(best, 0) <= 0:
                break
            short[best] -= 1
    if all(v <= 0 for v in short.values()):
        return Cut(ok=True)
    value, _, seen_members = _transport(classes, want)
    if value >= sum(want.values()):
        return Cut(ok=True)
    return _lower(classes, sorted(m for m in want if m not in seen_members), want)


def _lower(classes, ys, want) -> Cut:
    tasks = sum(q for q, hosts in classes if any(m in ys for m in hosts))
    room = sum(want[m] for m in ys)
    if tasks >= room:
        raise AssertionError("flow cut does not certify infeasibility")
    return Cut(ok=False, kind="lower", tasks=tasks, room=room, members=tuple(ys))


@dataclass(frozen=True)
class FlowSolution:
    """A min-cost flow: ``flow[(u, v)]`` on every arc used, its ``cost``, and checked ``potentials``."""

    flow: dict
    cost: int
    potentials: dict


def bounded_min_cost(arcs, supplies: dict) -> FlowSolution | None:
    """Min-cost flow with arc bounds; None when no flow meets the bounds.

    Parameters
    ----------
    arcs : iterable of (u, v, lo, hi, cost)
        Arcs with lower and upper bounds (``hi`` None: unbounded) and integer unit cost; the
        network has no cycle through unbounded arcs (every network here is layered).
    supplies : dict
        Node -> units it sends (positive) or takes (negative); they sum to 0.

    Returns
    -------
    FlowSolution or None
        The flow on the original arcs and node potentials ``pi`` with
        ``cost + pi[u] - pi[v] >= 0`` on every residual arc (checked here): the proof that no
        cheaper flow exists. The flow comes from OR-tools' min-cost flow (C++); nothing it says
        is trusted but through those potentials and the bounds, both checked here.
    """
    from ortools.graph.python import min_cost_flow

    arcs = list(arcs)
    index: dict = {}
    for u, v, lo, hi, _ in arcs:
        if hi is not None and hi < lo:
            return None
        index.setdefault(u, len(index))
        index.setdefault(v, len(index))
    for node in supplies:
        index.setdefault(node, len(index))
    seen = set()
    for u, v, *_ in arcs:
        if (u, v) in seen:
            raise ValueError(f"parallel arc {u}->{v}")
        seen.add((u, v))
    net = {n: 0 for n in index}
    for node, units in supplies.items():
        net[node] += units
    base_cost = 0
    for u, v, lo, _hi, cost in arcs:
        net[u] -= lo
        net[v] += lo
        base_cost += lo * cost
    big = sum(abs(x) for x in net.values()) + 1  # no arc of a cycle-free network carries more
    solver = min_cost_flow.SimpleMinCostFlow()
    for u, v, lo, hi, cost in arcs:
        solver.add_arc_with_capacity_and_unit_cost(index[u], index[v], big if hi is None else hi - lo, cost)
    for node, units in net.items():
        if units:
            solver.set_node_supply(index[node], units)
    if solver.solve() != solver.OPTIMAL:
        return None
    result = {(u, v): solver.flow(i) + lo for i, (u, v, lo, _hi, _cost) in enumerate(arcs)}
    for u, v, lo, hi, _ in arcs:  # the bounds, checked
        if result[(u, v)] < lo or (hi is not None and result[(u, v)] > hi):
            raise AssertionError("the flow breaks an arc's bounds")
    balance = {n: supplies.get(n, 0) for n in index}
    for (u, v), f in result.items():
        balance[u] -= f
        balance[v] += f
    if any(balance.values()):
        raise AssertionError("the flow breaks conservation")
    potentials = _potentials(arcs, result)
    return FlowSolution(flow=result, cost=sum(c * result[(u, v)] for u, v, _lo, _hi, c in arcs), potentials=potentials)


def _potentials(arcs, flow: dict) -> dict:
    """Shortest-path potentials on the residual graph (SPFA); raise if a negative cycle exists."""
    residual: dict = {}
    for u, v, lo, hi, w in arcs:
        residual.setdefault(u, [])
        residual.setdefault(v, [])
        f = flow[(u, v)]
        if hi is None or f < hi:
            residual[u].append((v, w))
        if f > lo:
            residual[v].append((u, -w))
    dist = {n: 0 for n in residual}
    queue = deque(residual)
    inqueue = set(residual)
    relaxed = {n: 0 for n in residual}
    limit = len(residual) + 1
    while queue:
        u = queue.popleft()
        inqueue.discard(u)
        for v, w in residual[u]:
            if dist[u] + w < dist[v]:
                dist[v] = dist[u] + w
                relaxed[v] += 1
                if relaxed[v] > limit:
                    raise AssertionError("negative residual cycle: the flow is not of least cost")
                if v not in inqueue:
                    queue.append(v)
                    inqueue.add(v)
    for u, outs in residual.items():  # the certificate, checked arc by arc
        for v, w in outs:
            if w + dist[u] - dist[v] < 0:
                raise AssertionError("potentials do not certify optimality")
    return dist


def quick_cut(arcs, supplies: dict) -> str | None:
    """A one-node certificate, when there is one: a node needing more than its arcs can bring or take away."""
    need: dict = {}
    into: dict = {}
    out: dict = {}
    for u, v, lo, hi, _ in arcs:
        need[u] = need.get(u, 0) + lo  # the lower bound is sent up front: u must get it back, v has it
        need[v] = need.get(v, 0) - lo
        into[v] = None if hi is None or into.get(v, 0) is None else into.get(v, 0) + hi - lo
        out[u] = None if hi is None or out.get(u, 0) is None else out.get(u, 0) + hi - lo
    for node, units in supplies.items():
        need[node] = need.get(node, 0) - units
    for node, d in need.items():
        if d > 0 and into.get(node, 0) is not None and d > into.get(node, 0):
            return f"a node of the slot network needs {d} more units than the {into.get(node, 0)} its entering arcs can carry"
        if d < 0 and out.get(node, 0) is not None and -d > out.get(node, 0):
            return f"a node of the slot network must send {-d} more units than the {out.get(node, 0)} its leaving arcs can carry"
    return None


def infeasibility_cut(arcs, supplies: dict) -> str:
    """Why no flow meets the bounds: a node set whose net demand exceeds what its entering arcs carry.

    Hoffman's condition, from a max flow on the usual transformation (lower bounds moved into
    node demands); the set is checked here by summing the input's own bounds. Raise when the
    flow does exist (then there is no certificate to give).
    """
    arcs = list(arcs)
    quick = quick_cut(arcs, supplies)
    if quick is not None:
        return quick
    cut = _hoffman_cut(arcs, supplies)
    if cut is None:
        raise AssertionError("the flow exists: no infeasibility certificate")
    need, inside = cut
    demand = sum(need[n] for n in inside)
    entering = 0
    for u, v, lo, hi, _ in arcs:
        if u not in inside and v in inside:
            if hi is None:
                raise AssertionError("unbounded arc enters the cut")
            entering += hi - lo
    if demand <= entering:
        raise AssertionError("cut does not certify infeasibility")
    return f"a set of {len(inside)} nodes of the slot network needs {demand} more units than the {entering} its entering arcs can carry"


def deficient_set(arcs, supplies: dict) -> frozenset | None:
    """A node set no flow within the bounds can feed (Hoffman), or None when a flow exists.

    The set ``Y`` is checked here by arithmetic on the input: what must leave it (lower bounds
    of leaving arcs) minus its own supply exceeds what its entering arcs can carry (their upper
    bounds). Every flow within *any* bounds keeps ``sum(hi into Y) - sum(lo out of Y) >=
    -supply(Y)``, so the set gives a linear cut on the bounds themselves
    (:mod:`rebalproof.solver.benders`).
    """
    arcs = list(arcs)
    for u, v, lo, hi, _ in arcs:
        if hi is not None and hi < lo:
            raise ValueError(f"arc {u}->{v} has an upper bound below its lower bound")
    cut = _hoffman_cut(arcs, supplies)
    if cut is None:
        return None
    inside = frozenset(cut[1])
    if not _short(arcs, supplies, inside):
        raise AssertionError("cut does not certify infeasibility")
    return inside


def _hoffman_cut(arcs, supplies: dict):
    """(net demand per node, the sink side of a minimum cut) when no flow meets the bounds, else None.

    The usual transformation: each lower bound is sent up front (its tail must get it back, its
    head has it), so the nodes' net demands and the arcs' remaining room form a plain max-flow
    problem from a super source to a super sink; a flow that cannot meet every demand leaves a
    cut whose sink side is the node set Hoffman's condition rejects.
    """
    from ortools.graph.python import max_flow

    need: dict = {}
    for u, v, lo, hi, _ in arcs:
        need[u] = need.get(u, 0) + lo
        need[v] = need.get(v, 0) - lo
    for node, units in supplies.items():
        need[node] = need.get(node, 0) - units
    index = {n: i for i, n in enumerate(need)}
    source, sink = len(index), len(index) + 1
    want = sum(d for d in need.values() if d > 0)
    big = want + 1  # an unbounded arc is never in a cut worth less than what is wanted
    solver = max_flow.SimpleMaxFlow()
    for u, v, lo, hi, _ in arcs:
        solver.add_arc_with_capacity(index[u], index[v], big if hi is None else hi - lo)
    for node, d in need.items():
        if d > 0:
            solver.add_arc_with_capacity(index[node], sink, d)
        elif d < 0:
            solver.add_arc_with_capacity(source, index[node], -d)
    if solver.solve(source, sink) != solver.OPTIMAL:
        raise AssertionError("max flow did not finish")
    if solver.optimal_flow() >= want:
        return None
    side = set(solver.get_source_side_min_cut())
    return need, {n for n in need if index[n] not in side}


def _short(arcs, supplies: dict, inside) -> bool:
    """Whether ``inside`` needs more than its entering arcs can carry (the Hoffman condition fails)."""
    room = -sum(units for node, units in supplies.items() if node in inside)  # what it must absorb
    for u, v, lo, hi, _ in arcs:
        if u not in inside and v in inside:
            if hi is None:
                return False
            room -= hi
        elif u in inside and v not in inside:
            room += lo
    return room > 0


def potential_bound(arcs, supplies: dict, potentials: dict):
    """The least cost of any flow within the bounds, bounded below through ``potentials`` (LP duality).

    For every flow ``f``: ``cost(f) = sum r_a f_a - sum pi_v supply_v`` with reduced costs
    ``r_a = c_a + pi_u - pi_v``, so ``cost(f) >= sum (r_a lo_a if r_a >= 0 else r_a hi_a) -
    sum pi_v supply_v`` whatever the bounds are, as long as no unbounded arc has ``r_a < 0``.
    Returns ``(constant, terms)``: ``terms`` lists ``(arc index, r_a, "lo" or "hi")`` for the
    arcs with ``r_a != 0``; the bound is ``constant + sum r_a * bound``.
    """
    constant = -sum(potentials.get(n, 0) * units for n, units in supplies.items())
    terms = []
    for i, (u, v, _lo, hi, cost) in enumerate(arcs):
        r = cost + potentials.get(u, 0) - potentials.get(v, 0)
        if r > 0:
            terms.append((i, r, "lo"))
        elif r < 0:
            if hi is None:
                raise AssertionError("an unbounded arc has a negative reduced cost: no bound")
            terms.append((i, r, "hi"))
    return constant, terms


def unusable_arcs(arcs, flow: dict) -> set:
    """Arcs (as ``(u, v)``) that carry nothing in *every* flow within the bounds, given one flow ``flow``.

    An arc at its lower bound 0 whose head cannot reach its tail in the residual graph of
    ``flow`` carries 0 in every flow within the bounds. Certificate (checked here): a rank per
    node, non-decreasing along every residual arc (the topological order of the residual
    graph's strongly connected components), and strictly increasing along the arc. The nodes
    ranked at least its head then form a set every flow must leave through full arcs and enter
    through arcs at their lower bounds -- as ``flow`` does -- so the arc stays at 0.
    """
    graph = nx.DiGraph()
    residual = []
    for u, v, lo, hi, _ in arcs:
        f = flow[(u, v)]
        graph.add_node(u)
        graph.add_node(v)
        if hi is None or f < hi:
            residual.append((u, v))
        if f > lo:
            residual.append((v, u))
    graph.add_edges_from(residual)
    condensed = nx.condensation(graph)
    order = {c: i for i, c in enumerate(nx.topological_sort(condensed))}
    rank = {n: order[c] for n, c in condensed.graph["mapping"].items()}
    for a, b in residual:  # the certificate, checked arc by arc
        if rank[a] > rank[b]:
            raise AssertionError("ranks do not follow the residual arcs")
    out = set()
    for u, v, lo, hi, _ in arcs:
        if lo == 0 and flow[(u, v)] == 0 and rank[u] < rank[v]:
            out.add((u, v))
    return out
