"""Red team 14: a KIP-441 high-availability assignor written from seed 002 alone.

Style choices (on purpose different from the obvious ones):
  * tasks are iterated in REVERSE natural order, subtopologies too;
  * among equals the member with the HIGHEST id (natural order) wins;
  * the balanced target is built per subtopology by a D'Hondt deal of slots over threads.

Structure (seed 002, "Assignment Algorithm" requirements 1-6):
  0. if the current assignment is valid, caught up and balanced: return it (requirement 5);
  1. a balanced, sticky TARGET for all stateful actives (lags only as tie-breaks);
  2. CONSTRAINED actives: the target owner if it is most caught up, else the current owner if it
     is most caught up, else the least-loaded most-caught-up member (requirement 1);
  3. standbys on the next-most-caught-up members (requirement 2);
  4. warmups (extra standbys) on target owners, at most max_warmup_replicas (requirement 3);
  5. stateless tasks packed around the stateful actives, sticky (requirements 4, 6);
  6. a probing rebalance while some stateful active is not on its target.

Bug variants (red team 14's planted bugs) are switched on by BUGS, a set of names; each
`bug_<name>` function below is the assignor with that one bug.
"""
from __future__ import annotations

import re
import sys
from fractions import Fraction

INF = sys.maxsize
BUGS: set = set()


def _nat(s):
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", str(s))]


def _sub(tid):
    if "sub_from_partition" in BUGS and "_" in tid:
        return tid.split("_", 1)[1]
    return tid.split("_", 1)[0]


class _View:
    def __init__(self, req):
        cfg = req.get("config", {}) or {}
        self.nsb = int(cfg.get("num_standby_replicas", 0))
        self.arl = int(cfg.get("acceptable_recovery_lag", 10000))
        self.maxw = int(cfg.get("max_warmup_replicas", 2))
        if "hardcode_arl" in BUGS:
            self.arl = 10000
        self.tasks = sorted((t["id"] for t in req.get("tasks", [])), key=_nat)
        self.stateful = {t["id"]: bool(t.get("stateful", True)) for t in req.get("tasks", [])}
        self.members = sorted((m["id"] for m in req.get("members", [])), key=_nat)
        self.m = {m["id"]: m for m in req.get("members", [])}
        self.cap = {i: max(1, int(self.m[i].get("capacity", 1) or 1)) for i in self.members}
        if "ignore_capacity" in BUGS:
            self.cap = {i: 1 for i in self.members}
        self.leaving = {i for i in self.members if self.m[i].get("leaving", False)}
        if "leaving_ordinary" in BUGS:
            self.leaving = set()
        stay = [i for i in self.members if i not in self.leaving]
        self.stay = stay if stay else list(self.members)
        self.role = {}  # (member, task) -> role it holds going in
        for i in self.members:
            for r in ("warmup", "standby", "active"):
                for t in self.m[i].get(r, []) or []:
                    self.role[(i, t)] = r
        self.owner = {}
        for i in self.members:
            for t in self.m[i].get("active", []) or []:
                self.owner.setdefault(t, i)
        # preference among equals: highest id first
        self.pref = {i: -k for k, i in enumerate(self.members)}

    def rank(self, i, t):
        lags = self.m[i].get("lags", {}) or {}
        if t in lags:
            lag = int(lags[t])
            if "arl_zero_means_off" in BUGS and self.arl == 0:
                return 0
            if "lag_strict" in BUGS:
                return 0 if lag < self.arl else lag
            if "rank_unfloored" in BUGS:
                return lag
            return 0 if lag <= self.arl else lag
        if t in (self.m[i].get("active", []) or []):
            return 0  # an active copy with no report is processing
        return INF

    def best(self, t, among):
        r = min(self.rank(i, t) for i in among)
        return [i for i in among if self.rank(i, t) == r]


def _within_one(counts, cap, members):
    for i in members:
        for j in members:
            if counts[i] * cap[j] > (counts[j] + 1) * cap[i]:
                return False
    return True


def _balanced(v, actives, members):
    """First reading: actives within one by threads, and every subtopology too."""
    tot = {i: 0 for i in members}
    subs = {}
    for t, i in actives.items():
        tot[i] += 1
        subs.setdefault(_sub(t), {j: 0 for j in members})[i] += 1
    if not _within_one(tot, v.cap, members):
        return False
    if "ok_literal_subtopology" in BUGS:
        # seed 002 literally: the subtopology run on the most instances runs on at most one more
        # instance than the subtopology run on the fewest
        spread = [sum(1 for i in members if c[i] > 0) for c in subs.values()]
        return not spread or max(spread) - min(spread) <= 1
    return all(_within_one(c, v.cap, members) for c in subs.values())


def _deal_slots(v, n, members, sub, tot, cur, total_first=False, ts=()):
    """D'Hondt: n slots over threads, ties to the less loaded, then to current holders."""
    got = {i: 0 for i in members}
    for _ in range(n):
        def key(i):
            k = [Fraction(sub[i] + got[i] + 1, v.cap[i]), Fraction(tot[i] + got[i] + 1, v.cap[i])]
            if total_first:
                k.reverse()
            if "no_stateless_stickiness" not in BUGS:
                k.append(0 if got[i] < cur.get(i, 0) else 1)
            if "slots_ignore_lags" not in BUGS:
                # members caught up on more of these tasks first (they can take them at once)
                k.append(got[i] - sum(1 for t in ts if v.stateful[t] and v.rank(i, t) == 0))
            k.append(v.pref[i])
            return tuple(k)
        i = min(members, key=key)
        got[i] += 1
    if "mixed_orders" in BUGS:
        # counts worked out in natural order, handed out in string order
        nat = sorted(members, key=_nat)
        stro = sorted(members)
        got = {stro[k]: got[nat[k]] for k in range(len(members))}
    return got


def _place(v, tasks, slots, members, keep_ok):
    """Fill each member's slots with tasks: keep current owners first, then by rank."""
    out = {}
    free = dict(slots)
    for t in reversed(tasks):
        o = v.owner.get(t)
        if o in free and free[o] > 0 and keep_ok(t, o):
            out[t] = o
            free[o] -= 1
    rest = [t for t in reversed(tasks) if t not in out]
    order = {t: k for k, t in enumerate(rest)}
    while rest:
        cands = [(v.rank(i, t) if v.stateful[t] else 0, order[t], v.pref[i], t, i)
                 for t in rest for i in members if free[i] > 0]
        if not cands:
            break
        _, _, _, t, i = min(cands)
        out[t] = i
        free[i] -= 1
        rest.remove(t)
    return out


def _target(v, members):
    """A balanced, sticky layout of the stateful actives (lags as tie-breaks only)."""
    sf = [t for t in v.tasks if v.stateful[t]]
    cur_ok = {t: v.owner[t] for t in sf if v.owner.get(t) in members
              and v.owner[t] in v.best(t, members)}
    if len(cur_ok) == len(sf) and "never_keep_balanced" not in BUGS \
            and "no_fixpoint_shortcut" not in BUGS:
        if _balanced(v, cur_ok, members):
            return dict(cur_ok)
    tries = []
    for total_first in ((True,) if "ok_total_first" in BUGS else (False, True)):
        tot = {i: 0 for i in members}
        target = {}
        subs = sorted({_sub(t) for t in sf}, key=_nat, reverse=True)
        groups = [[t for t in sf if _sub(t) == s] for s in subs]
        if "ok_literal_subtopology" in BUGS:
            groups = [sf]
        for ts in groups:
            cur = {}
            for t in ts:
                if t in cur_ok:
                    cur[cur_ok[t]] = cur.get(cur_ok[t], 0) + 1
            slots = _deal_slots(v, len(ts), members, {i: 0 for i in members}, tot, cur,
                                total_first, ts)
            placed = _place(v, ts, slots, members, lambda t, o: t in cur_ok)
            for t, i in placed.items():
                target[t] = i
                tot[i] += 1
        if _balanced(v, target, members):
            return target
        tries.append((target, _within_one(tot, v.cap, members)))
    for target, inst_ok in tries:
        if inst_ok:
            return target
    return tries[0][0]


def assign(req: dict) -> dict:
    v = _View(req)
    members = v.stay
    ans = {i: {"active": [], "standby": [], "warmup": []} for i in v.members}
    if not v.members:
        return {"assignment": {}, "probing_rebalance": False}
    need = min(v.nsb, len(members) - 1)
    if "one_standby_cap" in BUGS:
        need = min(need, 1)

    # 0. requirement 5: a valid, caught-up, balanced assignment is kept as it is
    if _settled(v, need) and "no_fixpoint_shortcut" not in BUGS:
        for i in v.members:
            for r in ("active", "standby", "warmup"):
                ans[i][r] = sorted(v.m[i].get(r, []) or [], key=_nat)
        return {"assignment": ans, "probing_rebalance": False}

    sf = [t for t in v.tasks if v.stateful[t]]
    target = _target(v, members)

    # 2. constrained actives
    active = {}
    load = {i: 0 for i in members}
    later = []
    for t in reversed(sf):
        cands = members if "caught_up_among_all" not in BUGS else v.members
        best = v.best(t, cands)
        if target.get(t) in best and not ("no_standby_promotion" in BUGS
                and v.role.get((target[t], t)) == "standby" and v.owner.get(t) in best):
            active[t] = target[t]
        elif v.owner.get(t) in best:
            active[t] = v.owner[t]
        else:
            later.append((t, best))
            continue
        load[active[t]] += 1
    for t, best in later:
        if "kafka_13600" in BUGS:
            best = members
        i = min(best, key=lambda i: (Fraction(load[i] + 1, v.cap[i]), v.pref[i]))
        active[t] = i
        load[i] += 1

    # 3. standbys
    copies = {i: 0 for i in v.members}
    for t, i in active.items():
        copies[i] += 1
    standbys = {}
    role_pref = {"standby": 0, "warmup": 1, "active": 2}
    if "ok_old_owner_standby" in BUGS:
        role_pref = {"active": 0, "standby": 1, "warmup": 2}
    for t in reversed(sf):
        cands = [i for i in members if i != active[t]]
        if "standby_low_capacity" in BUGS:
            # the small members are "cheaper" for replicas: fewest threads first, then rank
            cands.sort(key=lambda i: (v.cap[i], v.rank(i, t), role_pref.get(v.role.get((i, t)), 3),
                                      Fraction(copies[i], v.cap[i]), v.pref[i]))
        else:
            cands.sort(key=lambda i: (
                (min(v.rank(i, t), 1) if "standby_ignores_behind_rank" in BUGS else v.rank(i, t))
                if "standbys_by_load" not in BUGS else 0,
                role_pref.get(v.role.get((i, t)), 3),
                0 if target.get(t) == i else 1,
                Fraction(copies[i], v.cap[i]),
                v.pref[i]))
        n = need
        if "extra_standbys" in BUGS:
            n = min(v.nsb + (1 if len(members) >= 4 else 0), len(cands))
        if "standbys_all_or_nothing" in BUGS and len(cands) < v.nsb:
            n = 0
        if "standby_rank_unfloored" in BUGS:
            def raw(i):
                lags = v.m[i].get("lags", {}) or {}
                return lags[t] if t in lags else (0 if v.rank(i, t) == 0 else INF)
            cands.sort(key=lambda i: (raw(i), v.pref[i]))
        chosen = cands[:n]
        if "standby_rotate" in BUGS and n >= 2:
            # the second standby goes round: to the candidate after the member holding it now
            rest = [i for i in cands if i not in chosen[:1]]
            holder = [i for i in rest if v.role.get((i, t)) == "standby"]
            if holder:
                k = rest.index(holder[-1])
                chosen = chosen[:1] + [rest[(k + 1 + j) % len(rest)] for j in range(n - 1)]
        standbys[t] = chosen
        for i in chosen:
            copies[i] += 1

    # 4. warmups on the target owners
    moving = [t for t in reversed(sf) if active[t] != target[t]]
    wcands = []
    for t in moving:
        d = target[t]
        if d in standbys[t] and "warmup_despite_standby" not in BUGS:
            continue
        if "warmup_despite_standby" in BUGS and d in standbys[t]:
            standbys[t] = [i for i in standbys[t] if i != d]
        held = 0 if v.role.get((d, t)) in ("warmup", "standby") else 1
        wcands.append((held, v.rank(d, t), len(wcands), t))
    wcands.sort()
    budget = v.maxw
    if "warmups_unbounded" in BUGS:
        budget = len(wcands)
    if "standbys_count_toward_budget" in BUGS:
        budget = max(0, v.maxw - sum(len(s) for s in standbys.values()))
    if "behind_standbys_use_budget" in BUGS:
        budget = max(0, budget - sum(1 for t, ss in standbys.items() for i in ss if v.rank(i, t) > 0))
    if "hardcode_maxw2" in BUGS:
        budget = 2
    if "budget_off_by_one" in BUGS:
        budget = v.maxw - 1
    warm = {}
    per = {}
    for _, _, _, t in wcands:
        if "budget_per_member" in BUGS:
            key = target[t]
        elif "budget_per_subtopology" in BUGS:
            key = _sub(t)
        else:
            key = None
            if len(warm) >= budget:
                break
        if key is not None and per.get(key, 0) >= v.maxw:
            continue
        per[key] = per.get(key, 0) + 1
        warm[t] = target[t]

    if "decoy_warmup" in BUGS and warm:
        for t in list(warm):
            if len(warm) + sum(1 for x in ans.values() for _ in x["warmup"]) >= budget:
                break
            holders = {active[t], warm[t], *standbys[t]}
            others = [i for i in members if i not in holders]
            if others:
                d = min(others, key=lambda i: (copies[i], v.pref[i]))
                ans[d]["warmup"].append(t)

    # 5. stateless tasks packed around the stateful actives
    sl = [t for t in v.tasks if not v.stateful[t]]
    sl_active = {}
    if "ok_kafka_stateless" in BUGS:
        tot = {i: load[i] for i in members}
        for t in sl:
            i = min(members, key=lambda i: (Fraction(tot[i] + 1, v.cap[i]), v.pref[i]))
            sl_active[t] = i
            tot[i] += 1
    for total_first in () if "ok_kafka_stateless" in BUGS else ((False, True) if "stateless_sub_first_only" not in BUGS else (False,)):
        sl_active = _pack_stateless(v, sl, members, load, total_first)
        allact = dict(active)
        allact.update(sl_active)
        if _balanced(v, allact, members):
            break
        if total_first is False:
            first_try = sl_active
    else:
      if "ok_kafka_stateless" not in BUGS:
        # neither order balances everything: keep the one whose instances are within one
        tot = {i: 0 for i in members}
        for t, i in list(active.items()) + list(first_try.items()):
            tot[i] += 1
        if _within_one(tot, v.cap, members):
            sl_active = first_try

    for t, i in active.items():
        ans[i]["active"].append(t)
    for t, i in sl_active.items():
        ans[i]["active"].append(t)
    for t, ss in standbys.items():
        for i in ss:
            ans[i]["standby"].append(t)
    for t, i in warm.items():
        ans[i]["warmup"].append(t)
    for i in ans:
        for r in ans[i]:
            ans[i][r].sort(key=_nat)

    probing = any(active[t] != target[t] for t in sf)
    had_warmups = any(v.m[i].get("warmup") for i in v.members)
    if "ok_probe_once_more" in BUGS and had_warmups:
        probing = True
    if "ok_keep_old_copy" in BUGS:
        # a former owner that lost its active keeps its (caught-up) copy for one more probing round
        extra = len(warm)
        for t in sf:
            o = v.owner.get(t)
            if extra >= v.maxw or o is None or o not in members or o == active[t]:
                continue
            if o in standbys[t] or o in warm.values() and warm.get(t) == o:
                continue
            if v.rank(o, t) == 0:
                ans[o]["warmup"].append(t)
                extra += 1
                probing = True
    if "probe_instance_only" in BUGS:
        allact = dict(active)
        allact.update(sl_active)
        tot = {i: 0 for i in members}
        for t, i in allact.items():
            tot[i] += 1
        probing = not _within_one(tot, v.cap, members)
    if "never_probe" in BUGS:
        probing = False
    if "probe_only_with_warmups" in BUGS:
        probing = bool(warm)
    return {"assignment": ans, "probing_rebalance": probing}


def _settled(v, need):
    if v.leaving:
        return False
    actives = {}
    seen = set()
    for i in v.members:
        held = []
        for r in ("active", "standby", "warmup"):
            held += list(v.m[i].get(r, []) or [])
        if len(held) != len(set(held)):
            return False
        for t in v.m[i].get("active", []) or []:
            if t in actives:
                return False
            actives[t] = i
        seen.update(held)
    if set(actives) != set(v.tasks) or not seen <= set(v.tasks):
        return False
    for t in v.tasks:
        reps = [i for i in v.members if i != actives[t] and (i, t) in v.role]
        if not v.stateful[t]:
            if reps:
                return False
            continue
        if len(reps) != need:
            return False
        if v.rank(actives[t], t) != 0:
            return False
        holders = set(reps) | {actives[t]}
        free = [i for i in v.members if i not in holders]
        if free and reps:
            rk = v.rank
            if "standby_rank_unfloored" in BUGS:
                def rk(i, t):
                    lags = v.m[i].get("lags", {}) or {}
                    return lags[t] if t in lags else v.rank(i, t)
            best_free = min(rk(i, t) for i in free)
            if any(rk(i, t) > best_free for i in reps):
                return False
    return _balanced(v, actives, v.members)


def _pack_stateless(v, sl, members, load, total_first):
    tot = {i: load[i] for i in members}
    sl_active = {}
    for s in sorted({_sub(t) for t in sl}, key=_nat, reverse=True):
        ts = [t for t in sl if _sub(t) == s]
        cur = {}
        for t in ts:
            o = v.owner.get(t)
            if o in tot:
                cur[o] = cur.get(o, 0) + 1
        if "stateless_by_instance" in BUGS:
            caps, v.cap = v.cap, {i: 1 for i in v.members}
            slots = _deal_slots(v, len(ts), members, {i: 0 for i in members}, tot, cur, total_first)
            v.cap = caps
        else:
            slots = _deal_slots(v, len(ts), members, {i: 0 for i in members}, tot, cur, total_first)
        keep = (lambda t, o: True) if "no_stateless_stickiness" not in BUGS else (lambda t, o: False)
        placed = _place(v, ts, slots, members, keep)
        for t, i in placed.items():
            sl_active[t] = i
            tot[i] += 1
    return sl_active


def _variant(name):
    def f(req):
        BUGS.clear()
        BUGS.add(name)
        try:
            return assign(req)
        finally:
            BUGS.clear()
    f.__name__ = "bug_" + name
    return f


for _n in ["lag_strict", "rank_unfloored", "hardcode_arl", "ignore_capacity", "one_standby_cap",
           "no_fixpoint_shortcut", "never_keep_balanced", "caught_up_among_all", "kafka_13600",
           "standby_low_capacity", "standbys_by_load", "extra_standbys", "warmup_despite_standby",
           "warmups_unbounded", "standbys_count_toward_budget", "budget_off_by_one",
           "stateless_by_instance", "no_stateless_stickiness", "slots_ignore_lags",
           "stateless_sub_first_only", "never_probe",
           "probe_only_with_warmups", "arl_zero_means_off", "mixed_orders",
           "no_standby_promotion", "standbys_all_or_nothing", "standby_rank_unfloored",
           "standby_rotate", "hardcode_maxw2", "budget_per_member", "budget_per_subtopology",
           "sub_from_partition", "leaving_ordinary", "standby_ignores_behind_rank",
           "behind_standbys_use_budget", "probe_instance_only", "ok_old_owner_standby",
           "ok_total_first", "ok_kafka_stateless", "ok_probe_once_more", "ok_keep_old_copy",
           "ok_literal_subtopology", "decoy_warmup"]:
    globals()["bug_" + _n] = _variant(_n)
