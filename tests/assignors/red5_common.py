"""Red team 5: shared helpers for the independent assignors (written from the seeds only).

Views are the RebalanceInput dicts of README "The contracts"; answers are Assignment dicts.
"""
from __future__ import annotations

from fractions import Fraction

INF = float("inf")


def cfg(view, key, default):
    return (view.get("config") or {}).get(key, default)


def subtopology(task_id: str) -> str:
    return task_id.split("_", 1)[0]


def task_key(task_id: str):
    """Numeric-aware sort key for S_P ids."""
    out = []
    for part in task_id.split("_"):
        out.append((0, int(part), "") if part.isdigit() else (1, 0, part))
    return tuple(out)


def member_key(mid: str):
    digits = "".join(ch for ch in mid if ch.isdigit())
    return (int(digits) if digits else 0, mid)


class View:
    """The leader's view, pre-digested."""

    def __init__(self, view):
        self.raw = view
        self.arl = cfg(view, "acceptable_recovery_lag", 10000)
        self.nsb = cfg(view, "num_standby_replicas", 0)
        self.maxw = cfg(view, "max_warmup_replicas", 2)
        self.tasks = sorted((t["id"] for t in view["tasks"]), key=task_key)
        self.stateful = {t["id"]: t.get("stateful", True) for t in view["tasks"]}
        self.members = sorted((m["id"] for m in view["members"]), key=member_key)
        self.m = {m["id"]: m for m in view["members"]}
        self.cap = {mid: self.m[mid].get("capacity", 1) for mid in self.members}
        self.leaving = {mid: bool(self.m[mid].get("leaving", False)) for mid in self.members}
        self.prev = view.get("previous_members")
        self.role = {}  # (member, task) -> role
        for mid in self.members:
            for r in ("active", "standby", "warmup"):
                for t in self.m[mid].get(r, []) or []:
                    self.role[(mid, t)] = r

    def lag(self, mid, t):
        lags = self.m[mid].get("lags", {}) or {}
        if t in lags:
            return lags[t]
        if self.role.get((mid, t)) == "active":
            return 0  # an active copy with no report counts as lag 0
        return None

    def rank(self, mid, t):
        """KIP-441 rank: floored at acceptable_recovery_lag (<= is caught up), no state last."""
        if not self.stateful[t]:
            return 0
        lg = self.lag(mid, t)
        if lg is None:
            return INF
        return 0 if lg <= self.arl else lg

    def caught_up(self, mid, t):
        return self.rank(mid, t) == 0

    def holders(self, t, role):
        return [mid for mid in self.members if self.role.get((mid, t)) == role]


def empty_answer(members):
    return {mid: {"active": [], "standby": [], "warmup": []} for mid in members}


def finish(answer, probing=False):
    for mid, a in answer.items():
        for r in ("active", "standby", "warmup"):
            a[r] = sorted(set(a[r]), key=task_key)
    return {"assignment": answer, "probing_rebalance": bool(probing)}


class Load:
    """Potential over an active layout: W * sum c^2/cap + sum_s c_s^2/cap (exact fractions).

    Minimising it by single moves and swaps gives per-thread balance first, then spread of
    each subtopology (seed 002 "Constraints and Cost Function", "Defining 'balance'")."""

    W = 1000

    def __init__(self, members, cap):
        self.members = members
        self.cap = cap

    def phi_member(self, tasks_of_member, mid):
        c = len(tasks_of_member)
        per = {}
        for t in tasks_of_member:
            s = subtopology(t)
            per[s] = per.get(s, 0) + 1
        cap = self.cap[mid]
        return Fraction(self.W * c * c, cap) + sum(Fraction(v * v, cap) for v in per.values())


def local_search(layout, members, cap, allowed, tie_pref=None):
    """layout: task -> member. allowed(task, member) -> bool.
    Improve the potential by single moves and swaps, best first; deterministic. Returns new dict."""
    layout = dict(layout)
    load = Load(members, cap)
    tie_pref = tie_pref or (lambda t, m: 0)

    def tasks_of(mid):
        return [t for t, o in layout.items() if o == mid]

    for _ in range(200):
        held = {mid: tasks_of(mid) for mid in members}
        phi = {mid: load.phi_member(held[mid], mid) for mid in members}
        best = None
        for t in sorted(layout, key=task_key):
            a = layout[t]
            for b in members:
                if b == a or not allowed(t, b):
                    continue
                na = [x for x in held[a] if x != t]
                nb = held[b] + [t]
                d = load.phi_member(na, a) + load.phi_member(nb, b) - phi[a] - phi[b]
                if d < 0:
                    key = (d, tie_pref(t, b), task_key(t), member_key(b))
                    if best is None or key < best[0]:
                        best = (key, [(t, b)])
                for u in held[b]:
                    if not allowed(u, a) or subtopology(u) == subtopology(t) and False:
                        continue
                    na2 = na + [u]
                    nb2 = [x for x in nb if x != u]
                    d2 = load.phi_member(na2, a) + load.phi_member(nb2, b) - phi[a] - phi[b]
                    if d2 < 0:
                        key = (d2, tie_pref(t, b) + tie_pref(u, a), task_key(t), member_key(b))
                        if best is None or key < best[0]:
                            best = (key, [(t, b), (u, a)])
        if best is None:
            return layout
        for t, b in best[1]:
            layout[t] = b
    return layout
