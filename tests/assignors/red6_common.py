"""Red team 6: shared plumbing for its KIP-441 assignors (written from the seed, not from rebalproof).

Only parsing, ranking and a bounded min-cost-flow helper live here; every assignor decides its
own policy (targets, tie-breaking, standbys, warmups, probing).
"""
import math
import re
from fractions import Fraction

import networkx as nx

INF = 2 ** 62


def natkey(s):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", s)]


def subtopology(tid):
    return tid.split("_", 1)[0]


class View:
    def __init__(self, inp):
        cfg = inp.get("config", {}) or {}
        self.num_standbys = cfg.get("num_standby_replicas", 0)
        self.arl = cfg.get("acceptable_recovery_lag", 10000)
        self.max_warmups = cfg.get("max_warmup_replicas", 2)
        self.tasks = [t["id"] for t in inp["tasks"]]
        self.stateful = {t["id"]: t.get("stateful", True) for t in inp["tasks"]}
        self.members = [m["id"] for m in inp["members"]]
        self.cap = {m["id"]: m.get("capacity", 1) for m in inp["members"]}
        self.leaving = {m["id"]: m.get("leaving", False) for m in inp["members"]}
        self.active = {m["id"]: set(m.get("active", [])) for m in inp["members"]}
        self.standby = {m["id"]: set(m.get("standby", [])) for m in inp["members"]}
        self.warmup = {m["id"]: set(m.get("warmup", [])) for m in inp["members"]}
        self.lags = {m["id"]: dict(m.get("lags", {})) for m in inp["members"]}
        self.previous = inp.get("previous_members")
        self.owner = {}
        for m in self.members:
            for t in self.active[m]:
                self.owner.setdefault(t, m)

    def holds(self, m, t):
        return t in self.active[m] or t in self.standby[m] or t in self.warmup[m]

    def lag(self, m, t):
        """Raw lag, INF for no local state; an active with no report is lag 0."""
        if t in self.lags[m]:
            return self.lags[m][t]
        if t in self.active[m]:
            return 0
        return INF

    def rank(self, m, t):
        lag = self.lag(m, t)
        if lag <= self.arl:
            return 0
        return lag

    def caught_up(self, m, t):
        return self.rank(m, t) == 0

    def best_rank(self, t):
        return min(self.rank(m, t) for m in self.members)

    def most_caught_up(self, t):
        b = self.best_rank(t)
        return [m for m in self.members if self.rank(m, t) == b]


def empty_answer(view):
    return {m: {"active": [], "standby": [], "warmup": []} for m in view.members}


def finish(view, act, stby, warm, probing):
    """act: task->member; stby: task->list of members; warm: task->list of members."""
    out = empty_answer(view)
    for t, m in act.items():
        out[m]["active"].append(t)
    for t, ms in stby.items():
        for m in ms:
            out[m]["standby"].append(t)
    for t, ms in warm.items():
        for m in ms:
            out[m]["warmup"].append(t)
    for m in out:
        for k in out[m]:
            out[m][k].sort(key=natkey)
    return {"assignment": out, "probing_rebalance": bool(probing)}


def bounded_assignment(tasks, members, cost, group_of, box_group, box_member):
    """Assign each task to one member minimising sum(cost[t][m]).

    box_group[(g, m)] = (lo, hi) bounds on how many tasks of group g go to m;
    box_member[m] = (lo, hi) bounds on tasks per member. cost[t][m] None = forbidden.
    Returns task->member or None if infeasible.
    """
    G = nx.DiGraph()
    demand = {}

    def add_demand(n, d):
        demand[n] = demand.get(n, 0) + d

    src, snk = "SRC", "SNK"
    for t in tasks:
        # src -> t with lower bound 1, cap 1: forced
        add_demand(src, 1)
        add_demand(("t", t), -1)
        for m in members:
            c = cost[t][m]
            if c is None:
                continue
            G.add_edge(("t", t), ("gm", group_of[t], m), capacity=1, weight=c)
    groups = sorted(set(group_of[t] for t in tasks), key=natkey)
    for g in groups:
        for m in members:
            lo, hi = box_group[(g, m)]
            if hi < lo:
                return None
            node = ("gm", g, m)
            if lo > 0:
                add_demand(node, lo)
                add_demand(("m", m), -lo)
            if hi - lo > 0:
                G.add_edge(node, ("m", m), capacity=hi - lo, weight=0)
    for m in members:
        lo, hi = box_member[m]
        if hi < lo:
            return None
        if lo > 0:
            add_demand(("m", m), lo)
            add_demand(snk, -lo)
        if hi - lo > 0:
            G.add_edge(("m", m), snk, capacity=hi - lo, weight=0)
    G.add_edge(snk, src, capacity=len(tasks) + 1, weight=0)
    for n, d in demand.items():
        if n not in G:
            G.add_node(n)
    for n in G.nodes:
        G.nodes[n]["demand"] = demand.get(n, 0)
    try:
        flow = nx.min_cost_flow(G)
    except nx.NetworkXUnfeasible:
        return None
    res = {}
    for t in tasks:
        for (_, g, m), f in flow[("t", t)].items():
            if f > 0:
                res[t] = m
    if len(res) != len(tasks):
        return None
    return res


def quota_box(k, caps, m):
    C = sum(caps.values())
    x = Fraction(k * caps[m], C)
    return (math.floor(x), math.ceil(x))


def r1_balanced(counts, caps):
    ms = list(counts)
    return all(Fraction(counts[i], caps[i]) <= Fraction(counts[j] + 1, caps[j]) for i in ms for j in ms)


def r1_levels(k, caps):
    """Every box vector {m: (lo, hi)} describing reading-1 balanced layouts of k tasks.

    A layout n is reading-1 balanced iff with M = max n_i/c_i every n_j >= M c_j - 1;
    enumerate M over the candidate values a/c_i.
    """
    ms = list(caps)
    cands = sorted({Fraction(a, caps[m]) for m in ms for a in range(0, k + 1)})
    out = []
    seen = set()
    for M in cands:
        box = {}
        ok = True
        for m in ms:
            hi = math.floor(M * caps[m])
            lo = max(0, math.ceil(M * caps[m] - 1))
            if lo > hi:
                ok = False
                break
            box[m] = (lo, hi)
        if not ok:
            continue
        if sum(b[0] for b in box.values()) <= k <= sum(b[1] for b in box.values()):
            key = tuple(box[m] for m in ms)
            if key not in seen:
                seen.add(key)
                out.append(box)
    return out
