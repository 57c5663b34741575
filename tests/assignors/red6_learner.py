"""Red team 6: an independent KIP-429 learner assignor (written from seed 001 alone), with seeded bugs.

Assignor A: KIP-429 "Algorithm incremental-rebalancing", followed step by step.

Written from seeds 001/000 only.  Bugs are switched on with keyword flags so that each
seeded-bug variant is this code with exactly one mistake (the functions at the end).

Steps (seed 001, "Assignment Algorithm"):
  Assign active tasks: ready learners > previous owners > unready learner owners >
                       standby holders > resource available instances
  Keep existing learner tasks' assignment unchanged
  Pick new learner tasks out of heaviest loaded instances
  Assign learner tasks: new-coming instances / instances with corresponding standby
  Assign standby tasks
"""
from __future__ import annotations

import re


def _nat(s):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", s)]


def assign(view, **bug):
    cfg = view.get("config", {})
    nsb = cfg.get("num_standby_replicas", 0)
    arl = cfg.get("acceptable_recovery_lag", 10000)
    tasks = [t["id"] for t in view["tasks"]]
    stateful = {t["id"]: t.get("stateful", True) for t in view["tasks"]}
    members = sorted((m["id"] for m in view["members"]), key=_nat)
    M = {m["id"]: m for m in view["members"]}
    cap = {m: M[m].get("capacity", 1) for m in members}
    leaving = {m: bool(M[m].get("leaving", False)) for m in members}
    if all(leaving.values()):
        leaving = {m: False for m in members}
    if bug.get("learners_to_leaving"):
        # BUG: forgets the isLeaving tag when choosing where learning may happen
        learn_ok = {m: True for m in members}
    else:
        learn_ok = {m: not leaving[m] for m in members}
    staying = [m for m in members if not leaving[m]]
    prev = view.get("previous_members")
    act_in = {m: set(M[m].get("active", [])) for m in members}
    sb_in = {m: set(M[m].get("standby", [])) for m in members}
    wu_in = {m: set(M[m].get("warmup", [])) for m in members}
    lags = {m: dict(M[m].get("lags", {})) for m in members}
    if bug.get("leader_crash_forgets") and prev is None:
        # BUG: after a leader fail-over the learner bookkeeping is thought lost
        # (learners taken as ordinary stale copies, not kept, not promoted)
        for m in members:
            wu_in[m] = set()

    def caught(m, t):
        if not stateful[t]:
            return True
        lg = lags[m].get(t)
        if lg is None:
            return t in act_in[m]
        return lg <= arl

    def holds(m, t):
        return t in act_in[m] or t in sb_in[m] or t in wu_in[m]

    active = {}          # task -> member
    learners = {}        # task -> member (kept / new learner, warmup role)

    sf_tasks = [t for t in tasks if stateful[t]]
    sl_tasks = [t for t in tasks if not stateful[t]]

    load = {m: 0 for m in members}   # stateful actives decided so far

    def least(cands, ld):
        return min(cands, key=lambda m: (ld[m] / cap[m], _nat(m)))

    # ---- Step 1: active stateful tasks
    pending = []
    for t in sf_tasks:
        ready = [m for m in members if learn_ok[m] and t in wu_in[m] and caught(m, t)]
        owners = [m for m in members if t in act_in[m]]
        if not owners:
            # owner revoked a being-learned task at the join: caught-up state, no list
            owners = [m for m in members if not holds(m, t) and t in lags[m]
                      and lags[m][t] <= arl]
        if bug.get("never_promote"):
            ready = []
        if bug.get("batch_ready"):
            # member-level readiness: a worker "batches the ready call", so its learners
            # count as ready only once every learner it holds has caught up
            ready = [m for m in ready
                     if all(caught(m, x) for x in wu_in[m] if stateful.get(x, True))]
        if bug.get("promote_unready"):
            # BUG: any learner is taken as ready
            ready = [m for m in members if learn_ok[m] and t in wu_in[m]]
        if ready:
            active[t] = min(ready, key=lambda m: (load[m] / cap[m], _nat(m)))
        elif owners:
            if bug.get("evict_leaving") and all(leaving[o] for o in owners) and staying:
                # BUG: leaving member's task moved at once to the least loaded
                pending.append(t)
                continue
            # prefer a staying owner, then lowest id
            active[t] = min(owners, key=lambda m: (leaving[m], _nat(m)))
        else:
            pending.append(t)
        if t in active:
            load[active[t]] += 1
    for t in pending:
        unready = [m for m in members if t in wu_in[m] and not leaving[m]]
        sbh = [m for m in members if t in sb_in[m] and not leaving[m]]
        if bug.get("orphan_cold"):
            # BUG: a task with no current active is treated as a new task ("Scale Up from
            # Empty Group": not in any active bucket -> transfer at once) and dealt by load,
            # its learner and standbys ignored
            active[t] = least(staying or members, load)
            load[active[t]] += 1
            continue
        if bug.get("orphan_to_leaving"):
            # BUG: "resource available instances" counted over every member, leaving ones too
            staying_pool = members
        else:
            staying_pool = staying or members
        if unready:
            active[t] = least(unready, load)
        elif sbh:
            cu = [m for m in sbh if caught(m, t)]
            active[t] = least(cu or sbh, load)
        else:
            pool = staying_pool
            # state on disk counts as a little resource bonus: prefer caught-up
            cu = [m for m in pool if caught(m, t) and t in lags[m]]
            active[t] = least(cu or pool, load)
        load[active[t]] += 1

    # ---- Step 2: keep existing learners (unready learners of tasks whose owner keeps them)
    for t in sf_tasks:
        if bug.get("failover_replan") and prev is None:
            # BUG: a new leader (no memory) re-plans the restoring learners from scratch
            break
        if bug.get("drop_learners") or bug.get("replan_newest"):
            # BUG (replan_newest): learner targets re-planned every rebalance
            break
        a = active[t]
        cand = [m for m in members if t in wu_in[m] and m != a and learn_ok[m]]
        if not cand:
            continue
        if bug.get("learner_hop"):
            # BUG: learner re-placed on the next member by id each rebalance
            others = [m for m in members if learn_ok[m] and m != a and not holds(m, t)]
            if others:
                learners[t] = others[0]
                continue
        learners[t] = min(cand, key=_nat)

    # projected stateful load: an active with a learner is counted at the learner
    def projected():
        p = {m: 0 for m in members}
        for t in sf_tasks:
            p[learners.get(t, active[t])] += 1
        return p

    # ---- Step 3: pick new learner tasks
    if not bug.get("no_learners"):
        # leaving members: every stateful active gets a learner among staying members
        for t in sf_tasks:
            a = active[t]
            if leaving[a] and t not in learners:
                tgt = [m for m in members if learn_ok[m] and m != a]
                if not tgt:
                    continue
                p = projected()
                sbh = [m for m in tgt if t in sb_in[m]]
                if bug.get("ignore_standby"):
                    sbh = []
                if bug.get("replan_newest"):
                    newc = [m for m in tgt if prev is not None and m not in prev]
                    if newc:
                        learners[t] = least(newc, p)
                        continue
                learners[t] = least(sbh or tgt, p)
        # heaviest -> lightest while it strictly improves the heaviest one
        for _ in range(len(sf_tasks) + 1):
            p = projected()
            tgt = [m for m in members if learn_ok[m]]
            if not tgt:
                break
            donors = [m for m in staying if any(active[t] == m and t not in learners
                                                for t in sf_tasks)]
            if not donors:
                break
            h = sorted(donors, key=lambda m: (-p[m] / cap[m], _nat(m)))[0]
            movable = [t for t in sf_tasks if active[t] == h and t not in learners]
            best = None
            for t in movable:
                for m in tgt:
                    if m == h:
                        continue
                    if (p[m] + 1) / cap[m] < p[h] / cap[h]:
                        key = (p[m] / cap[m], 0 if t in sb_in[m] else 1, _nat(m), _nat(t))
                        if bug.get("failover_replan") and prev is None:
                            key = (p[m] / cap[m], [-x if isinstance(x, int) else 0 for x in _nat(m)], _nat(t))
                        if bug.get("replan_newest"):
                            newc = prev is not None and m not in prev
                            key = (0 if newc else 1,) + key
                        if bug.get("ignore_standby"):
                            key = (p[m] / cap[m], _nat(m), _nat(t))
                        if best is None or key < best[0]:
                            best = (key, t, m)
            if best is None:
                break
            _, t, m = best
            learners[t] = m

    # ---- Step 4: standbys (learners count as replicas)
    need = min(nsb, max(0, len(staying) - 1))
    standby = {t: [] for t in sf_tasks}
    totals = {m: 0 for m in members}
    for t in sf_tasks:
        totals[active[t]] += 1
        if t in learners:
            totals[learners[t]] += 1
    for t in sf_tasks:
        have = 1 if t in learners and not leaving[learners[t]] else 0
        while have < need:
            spool = members if bug.get("standby_to_leaving") else staying
            cands = [m for m in spool if m != active[t] and learners.get(t) != m
                     and m not in standby[t]]
            if not cands:
                break
            m = min(cands, key=lambda m: (0 if (bug.get("standby_to_leaving") and t in act_in[m]) else 1,
                                          0 if t in sb_in[m] else 1,
                                          0 if caught(m, t) and t in lags[m] else 1,
                                          totals[m] / cap[m], _nat(m)))
            standby[t].append(m)
            totals[m] += 1
            have += 1

    # ---- Stateless: immediate transfer, sticky, balanced separately
    sl_active = {}
    sl_load = {m: 0 for m in members}
    pool = staying or members
    for t in sl_tasks:
        owners = [m for m in members if t in act_in[m] and not leaving[m]]
        if owners:
            sl_active[t] = owners[0]
            sl_load[owners[0]] += 1
    for t in sl_tasks:
        if t not in sl_active:
            m = least(pool, sl_load)
            sl_active[t] = m
            sl_load[m] += 1
    for _ in range(len(sl_tasks) + 1):
        h = max(pool, key=lambda m: (sl_load[m] / cap[m], _nat(m)))
        l = min(pool, key=lambda m: (sl_load[m] / cap[m], _nat(m)))
        if (sl_load[l] + 1) / cap[l] < sl_load[h] / cap[h]:
            t = max((t for t in sl_tasks if sl_active[t] == h), key=_nat)
            sl_active[t] = l
            sl_load[h] -= 1
            sl_load[l] += 1
        else:
            break
    if bug.get("stateless_learners"):
        # BUG: stateless tasks are "learned" like stateful ones: a stateless task
        # that should move gets a learner first and its active stays put
        for t in sl_tasks:
            owners = [m for m in members if t in act_in[m]]
            if owners and sl_active[t] != owners[0] and t not in wu_in[sl_active[t]]:
                learners[t] = sl_active[t]
                sl_active[t] = owners[0]

    out = {m: {"active": [], "standby": [], "warmup": []} for m in members}
    for t, m in active.items():
        out[m]["active"].append(t)
    for t, m in sl_active.items():
        out[m]["active"].append(t)
    for t, m in learners.items():
        out[m]["warmup"].append(t)
    for t, ms in standby.items():
        for m in ms:
            out[m]["standby"].append(t)
    for m in out:
        for k in out[m]:
            out[m][k].sort(key=_nat)
    return {"assignment": out, "probing_rebalance": False}


# -- seeded bugs (each one flag of ``assign``) ---------------------------------------------------
def stateless_learners(v):
    """A leaving member's stateless task stays where it is for a round while a staying member
    gets a learner of it (seed 001: "For stateless tasks the ownership transfer should happen
    immediately without the need of a learning stage")."""
    return assign(v, stateless_learners=True)


def orphan_cold(v):
    """A task whose owner is gone goes to the least-loaded member, its learner and the caught-up
    standbys others hold ignored (seed 001's order: "To unready learner tasks owners", "To
    instances with standby tasks", and only then "To resource available instances")."""
    return assign(v, orphan_cold=True)
