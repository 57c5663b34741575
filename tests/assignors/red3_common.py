"""Red team round 3: what every red3 assignor reads from the leader's view (contract JSON).

Written from the seeds and the README's contract alone. Only reading helpers live here; each
assignor makes its own choices.
"""

from __future__ import annotations

import math

INF = 1 << 62  # rank of a member with no local state ("max long" as a proxy, KIP-441)


def natural(task_or_member: str):
    """Sort key: '0_10' after '0_9', 'I10' after 'I9'."""
    parts, cur, digits = [], "", None
    for ch in task_or_member:
        d = ch.isdigit()
        if digits is None or d == digits:
            cur += ch
        else:
            parts.append(int(cur) if digits else cur)
            cur = ch
        digits = d
    if cur:
        parts.append(int(cur) if digits else cur)
    return tuple((0, p) if isinstance(p, int) else (1, p) for p in parts)


def subtopology(task_id: str) -> str:
    return task_id.split("_", 1)[0] if "_" in task_id else task_id


class View:
    """The leader's view of one rebalance, read once."""

    def __init__(self, inp: dict):
        cfg = inp.get("config") or {}
        self.num_standbys = int(cfg.get("num_standby_replicas", 0))
        self.arl = int(cfg.get("acceptable_recovery_lag", 10000))
        self.max_warmups = int(cfg.get("max_warmup_replicas", 2))
        self.tasks = [t["id"] for t in inp["tasks"]]
        self.stateful = {t["id"]: bool(t.get("stateful", True)) for t in inp["tasks"]}
        self.members = [m["id"] for m in inp["members"]]
        self.capacity = {m["id"]: int(m.get("capacity", 1)) for m in inp["members"]}
        self.leaving = {m["id"]: bool(m.get("leaving", False)) for m in inp["members"]}
        self.active = {m["id"]: set(m.get("active") or []) for m in inp["members"]}
        self.standby = {m["id"]: set(m.get("standby") or []) for m in inp["members"]}
        self.warmup = {m["id"]: set(m.get("warmup") or []) for m in inp["members"]}
        self.lags = {m["id"]: dict(m.get("lags") or {}) for m in inp["members"]}
        prev = inp.get("previous_members")
        self.previous = None if prev is None else set(prev)
        self.owner = {}
        for m in self.members:
            for t in self.active[m]:
                self.owner.setdefault(t, m)

    def lag(self, task: str, member: str):
        """The member's lag on the task, or None when it has no local state."""
        if task in self.lags[member]:
            return int(self.lags[member][task])
        if task in self.active[member]:
            return 0  # an active copy with no report counts as lag 0
        return None

    def rank(self, task: str, member: str) -> int:
        """KIP-441's rank: floored at acceptable_recovery_lag ('lag <= acceptable_recovery_lag' is 0)."""
        if not self.stateful[task]:
            return 0
        lag = self.lag(task, member)
        if lag is None:
            return INF
        return 0 if lag <= self.arl else lag

    def best_rank(self, task: str, members=None) -> int:
        return min(self.rank(task, m) for m in (members or self.members))

    def holds_copy(self, task: str, member: str) -> bool:
        return task in self.active[member] or task in self.standby[member] or task in self.warmup[member]

    def stateful_tasks(self):
        return [t for t in self.tasks if self.stateful[t]]

    def stateless_tasks(self):
        return [t for t in self.tasks if not self.stateful[t]]


def fair_bounds(n: int, cap: int, total_cap: int):
    """[floor, ceil] of a member's fair share of n tasks, by capacity."""
    return (n * cap) // total_cap, -((-n * cap) // total_cap)


def per_thread_bounds(n: int, cap: int, total_cap: int):
    """Every thread within one of every other: cap * floor(n / C) .. cap * ceil(n / C)."""
    return cap * (n // total_cap), cap * math.ceil(n / total_cap)


def empty_answer(members):
    return {m: {"active": [], "standby": [], "warmup": []} for m in members}


def finish(answer: dict, probing: bool) -> dict:
    out = {}
    for m, roles in answer.items():
        out[m] = {r: sorted(set(roles[r]), key=natural) for r in ("active", "standby", "warmup")}
    return {"assignment": out, "probing_rebalance": bool(probing)}
