"""Red team 6: an independent KIP-441 (seed 002) assignor that balances by shares of threads.

Written from the seed alone (correct assignor A of red team 6), a 'quota planner'.

Balance read as each instance's share by threads (k * c_i / C rounded down or up), for every
subtopology and in total; the stickiest such layout (min-cost flow) is the target. Actives go
to the target when it is most caught up, else stay on a most-caught-up instance (the current
owner first) and the target gets a warmup while max_warmup_replicas lasts. Standbys on the
next-most-caught-up instances (current holders first, then per-thread copy load, then id).
Warmups: tasks whose target already restores a copy first, then task order.
Probing rebalance exactly while some active is not on its target.
"""
from tests.assignors.red6_common import INF, View, bounded_assignment, finish, natkey, quota_box, subtopology

STAY, CAUGHT, BEHIND, NONE = 0, 2, 20, 40
SCALE = 1_000_000


class QuotaPlanner:
    def __init__(self, inp):
        self.v = View(inp)

    # ---- target -------------------------------------------------------------------------
    def move_cost(self, t, m):
        v = self.v
        if not v.stateful[t]:
            return STAY if t in v.active[m] else CAUGHT
        r = v.rank(m, t)
        if r == 0:
            return STAY if t in v.active[m] else CAUGHT
        if r >= INF:
            return NONE
        return BEHIND if t not in v.active[m] else BEHIND // 2

    def caps(self):
        return dict(self.v.cap)

    def boxes(self, tasks, members, caps):
        groups = {}
        for t in tasks:
            groups.setdefault(subtopology(t), []).append(t)
        box_group = {}
        for g, ts in groups.items():
            for m in members:
                box_group[(g, m)] = quota_box(len(ts), caps, m)
        box_member = {m: quota_box(len(tasks), caps, m) for m in members}
        return box_group, box_member

    def target(self):
        v = self.v
        tasks = sorted(v.tasks, key=natkey)
        members = sorted(v.members, key=natkey)
        caps = self.caps()
        cost = {}
        for i, t in enumerate(tasks):
            cost[t] = {}
            for j, m in enumerate(members):
                cost[t][m] = self.move_cost(t, m) * SCALE + (i * len(members) + j) % 97
        group_of = {t: subtopology(t) for t in tasks}
        box_group, box_member = self.boxes(tasks, members, caps)
        res = bounded_assignment(tasks, members, cost, group_of, box_group, box_member)
        if res is None:  # cannot happen for quota boxes (matrix rounding), keep a safe fallback
            box_group = {k: (0, len(tasks)) for k in box_group}
            res = bounded_assignment(tasks, members, cost, group_of, box_group, box_member)
        return res

    # ---- realisation ----------------------------------------------------------------------
    def realise_active(self, t, tgt, load):
        v = self.v
        if not v.stateful[t]:
            return tgt
        best = v.most_caught_up(t)
        if tgt in best:
            return tgt
        o = v.owner.get(t)
        if o in best:
            return o
        return min(best, key=lambda m: (load[m] / v.cap[m], natkey(m)))

    def standby_slots(self):
        v = self.v
        return min(v.num_standbys, len(v.members) - 1)

    def standby_order(self, t, act_m, copies):
        v = self.v
        cands = [m for m in v.members if m != act_m]
        return sorted(cands, key=lambda m: (v.rank(m, t), 0 if v.holds(m, t) else 1,
                                            copies[m] / v.cap[m], natkey(m)))

    def warmup_order(self, pending):
        v = self.v
        # (task, target): targets already restoring a copy first
        return sorted(pending, key=lambda p: (0 if v.holds(p[1], p[0]) else 1, natkey(p[0])))

    def budget(self):
        return self.v.max_warmups

    def probing(self, act, tgt, warm, stby):
        return any(act[t] != tgt[t] for t in act)

    def assign(self):
        v = self.v
        tgt = self.target()
        load = {m: 0 for m in v.members}
        act = {}
        # stateless and on-target first so realised load is known
        order = sorted(v.tasks, key=natkey)
        for t in order:
            m = self.realise_active(t, tgt[t], load)
            act[t] = m
            load[m] += 1
        copies = dict(load)
        stby = {}
        for t in order:
            if not v.stateful[t]:
                continue
            chosen = self.standby_order(t, act[t], copies)[: self.standby_slots()]
            stby[t] = chosen
            for m in chosen:
                copies[m] += 1
        pending = [(t, tgt[t]) for t in order
                   if v.stateful[t] and act[t] != tgt[t] and tgt[t] not in stby[t]]
        warm = {}
        left = self.budget()
        for t, m in self.warmup_order(pending):
            if left <= 0:
                break
            warm.setdefault(t, []).append(m)
            left -= 1
        return finish(v, act, stby, warm, self.probing(act, tgt, warm, stby))


def assign(inp):
    return QuotaPlanner(inp).assign()


# -- seeded bugs ---------------------------------------------------------------------------------
def arl_wrong_key(inp):
    """Reads ``acceptable_recovery_lag`` under a misspelt key, so it always uses KIP-441's default
    of 10,000 whatever the group configures."""
    config = dict(inp.get("config", {}))
    config["acceptable_recovery_lag"] = 10000
    return assign({**inp, "config": config})
