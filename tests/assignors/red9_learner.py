"""Red team 9 (2026-11-29): a KIP-429 learner assignor written from seed 001 alone, with option knobs
(``tests/test_red9.py``).

Seed 001 "Assignment Algorithm":
  Assign active tasks: ready learners > previous owners > unready learner owners >
                       standby holders > resource available instances
  Keep existing learner tasks' assignment unchanged
  Pick new learner tasks out of heaviest loaded instances
  Assign learner tasks: new-coming instances with abundant resource / corresponding standbys
  Assign standby tasks

Knobs (``opt``) pick among choices the seed leaves open; ``bug`` flags seed one mistake each.
"""
from __future__ import annotations

import re
from fractions import Fraction


def nat(s):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", s)]


def assign(view, opt=None, bug=None):
    opt = opt or {}
    bug = bug or {}
    hi = opt.get("ties") == "high"          # ties to the highest id instead of lowest

    def idkey(m):
        k = nat(m)
        return [(-x if isinstance(x, int) else tuple(-ord(c) for c in x)) for x in k] if hi else k

    cfg = view.get("config") or {}
    arl = cfg.get("acceptable_recovery_lag", 10000)
    nsb = cfg.get("num_standby_replicas", 0)
    tasks = [t["id"] for t in view["tasks"]]
    stateful = {t["id"]: t.get("stateful", True) for t in view["tasks"]}
    M = {m["id"]: m for m in view["members"]}
    members = sorted(M, key=idkey)
    cap = {m: M[m].get("capacity", 1) or 1 for m in members}
    leaving = {m: bool(M[m].get("leaving", False)) for m in members}
    if all(leaving.values()):
        leaving = {m: False for m in members}
    if bug.get("no_leaving_tag"):
        leaving = {m: False for m in members}
    if bug.get("one_leaving_only"):
        first = [m for m in members if leaving[m]][:1]
        leaving = {m: m in first for m in members}
    staying = [m for m in members if not leaving[m]]
    prev = view.get("previous_members")
    act = {m: set(M[m].get("active") or ()) for m in members}
    sby = {m: set(M[m].get("standby") or ()) for m in members}
    wup = {m: set(M[m].get("warmup") or ()) for m in members}
    lags = {m: dict(M[m].get("lags") or {}) for m in members}

    def caught(m, t):
        if not stateful[t]:
            return True
        lg = lags[m].get(t)
        if lg is None:
            return t in act[m]
        return lg <= arl

    def holds(m, t):
        return t in act[m] or t in sby[m] or t in wup[m]

    SF = sorted((t for t in tasks if stateful[t]), key=nat)
    SL = sorted((t for t in tasks if not stateful[t]), key=nat)
    if opt.get("task_order") == "rev":
        SF.reverse()

    load = {m: 0 for m in members}

    def lkey(m, ld=None, extra=1):
        ld = load if ld is None else ld
        return (Fraction(ld[m] + extra, cap[m]), idkey(m))

    active = {}
    # ---- Step 1: stateful actives, in the seed's order, step by step over all tasks
    def ready_learners(t):
        if bug.get("promote_unready"):
            return [m for m in staying if t in wup[m]]
        if bug.get("promote_leaving_learner"):
            return [m for m in members if t in wup[m] and caught(m, t)]
        return [m for m in staying if t in wup[m] and caught(m, t)]

    def prev_owners(t):
        o = [m for m in members if t in act[m]]
        if o:
            return o
        if bug.get("forget_revoked"):
            return []
        return [m for m in members if not holds(m, t) and t in lags[m] and caught(m, t)]

    def unready_learners(t):
        return [m for m in staying if t in wup[m]]

    def standby_holders(t):
        s = [m for m in staying if t in sby[m]]
        cu = [m for m in s if caught(m, t)]
        return cu or s

    def anyone(t):
        pool = members if bug.get("orphan_to_leaving") else staying
        return list(pool)

    if bug.get("orphan_to_leaving"):
        _lk = lkey
        def lkey(m, ld=None, extra=1):  # noqa: F811  BUG: a leaving member's load counts as 0
            ld = load if ld is None else ld
            return (Fraction(0 if leaving[m] else ld[m] + extra, cap[m]), idkey(m))

    steps = [ready_learners, prev_owners, unready_learners, standby_holders, anyone]
    if bug.get("standby_before_learner"):
        steps = [ready_learners, prev_owners, standby_holders, unready_learners, anyone]
    for step in steps:
        for t in SF:
            if t in active:
                continue
            c = step(t)
            if not c:
                continue
            if step is prev_owners:
                m = min(c, key=lambda m: (t not in act[m], leaving[m], idkey(m)))
            elif step is ready_learners and opt.get("promote_pick") == "idonly":
                m = min(c, key=idkey)
            else:
                m = min(c, key=lkey)
            if opt.get("direct_ready_standby") and step is prev_owners and leaving[m]:
                cu = [x for x in staying if t in sby[x] and caught(x, t)]
                if cu:
                    m = min(cu, key=lkey)
            if bug.get("evict_leaving_cold") and step is prev_owners and leaving[m] and staying:
                # BUG: a leaving owner's task handed to the least-loaded staying member at once
                m = min(staying, key=lkey)
            active[t] = m
            load[m] += 1

    # ---- Step 2: keep existing learners (unless promoted / on a leaving member)
    learner = {}   # task -> member
    demoted = set()
    for t in SF:
        a = active[t]
        c = [m for m in staying if t in wup[m] and m != a]
        if bug.get("learners_to_leaving_keep"):
            c = [m for m in members if t in wup[m] and m != a]
        if bug.get("drop_on_join") and prev is not None and any(m not in prev for m in members):
            c = []
        if bug.get("drop_after_failover") and prev is None:
            c = []
        if c and not (bug.get("drop_promoted_elsewhere") and False):
            # a task promoted elsewhere (active changed hands) keeps no further learner
            owner_kept = a in [m for m in members if t in act[m]] or (
                not any(t in act[m] for m in members)
                and a in [m for m in members if not holds(m, t) and t in lags[m] and caught(m, t)])
            if owner_kept or opt.get("keep_all_learners") or a not in [m for m in members if t in wup[m]]:
                learner[t] = min(c, key=idkey)
                if bug.get("demote_kept"):
                    demoted.add(t)

    def projected():
        p = {m: 0 for m in members}
        for t in SF:
            p[learner.get(t, active[t])] += 1
        return p

    may_learn = [m for m in staying]
    if bug.get("learners_to_leaving"):
        may_learn = list(members)
    if bug.get("new_leaving_learns") and prev is not None:
        may_learn = [m for m in members if not leaving[m] or m not in prev]

    def recipients(t):
        r = list(may_learn)
        if bug.get("sb_learner_leaving"):
            r += [m for m in members if leaving[m] and t in sby[m] and m not in r]
        return r
    if bug.get("learner_on_owner"):
        pass

    # ---- Step 3: new learners. Leaving members' tasks first.
    if not bug.get("leaving_never_learned"):
        for t in SF:
            a = active[t]
            if leaving[a] and t not in learner:
                c = [m for m in recipients(t) if m != a]
                if not c:
                    continue
                p = projected()
                sb = [m for m in c if t in sby[m]]
                if opt.get("learner_pick") == "plain":
                    sb = []
                learner[t] = min(sb or c, key=lambda m: lkey(m, p))
    # balance: heaviest staying donor hands a task to the lightest learner while it strictly helps
    for _ in range(len(SF) + 1):
        if bug.get("no_balance") or opt.get("no_balance"):
            break
        p = projected()
        donors = [m for m in staying if any(active[t] == m and t not in learner for t in SF)]
        if not donors:
            break
        h = max(donors, key=lambda m: (Fraction(p[m], cap[m]), [-x if isinstance(x, int) else 0 for x in idkey(m)]))
        best = None
        for m in members:
            if m == h:
                continue
            if Fraction(p[m] + 1, cap[m]) < Fraction(p[h], cap[h]):
                for t in SF:
                    if active[t] != h or t in learner or m not in recipients(t):
                        continue
                    key = (0 if (prev is not None and m not in prev) else 1,
                           0 if t in sby[m] else 1,
                           Fraction(p[m], cap[m]), idkey(m))
                    key = key + ((nat(t) if opt.get("shed") != "high" else [-x if isinstance(x, int) else 0 for x in nat(t)]),)
                    if best is None or key < best[0]:
                        best = (key, t, m)
        if best is None:
            break
        if opt.get("cap") and len(learner) >= cfg.get("max_warmup_replicas", 2):
            break
        _, t, m = best
        learner[t] = m
        if bug.get("learner_on_owner"):
            learner[t] = h

    extra_wu = []
    if bug.get("prev_owner_learner"):
        for t in SF:
            o = [m for m in members if t in act[m] or (not holds(m, t) and t in lags[m] and caught(m, t))]
            if active[t] in [m for m in members if t in wup[m]]:
                for m in o:
                    if m != active[t] and not leaving[m] and t not in learner:
                        learner[t] = m   # BUG: "previous active task owners after learner transfer" as a learner

    # ---- Stateless: immediate transfer, sticky within balance, among staying members
    sl = {}
    sload = {m: 0 for m in members}
    pool = staying
    for t in SL:
        o = [m for m in members if t in act[m]]
        if o and (not leaving[o[0]] or bug.get("stateless_stay")):
            sl[t] = o[0]
            sload[o[0]] += 1
    for t in SL:
        if t not in sl:
            m = min(pool, key=lambda m: lkey(m, sload))
            sl[t] = m
            sload[m] += 1
    for _ in range(len(SL) + 1):
        if bug.get("stateless_no_balance"):
            break
        h = max(pool, key=lambda m: (Fraction(sload[m], cap[m]), idkey(m)))
        l = min(pool, key=lambda m: (Fraction(sload[m], cap[m]), idkey(m)))
        if Fraction(sload[l] + 1, cap[l]) < Fraction(sload[h], cap[h]):
            movable = [t for t in SL if sl[t] == h]
            if not movable:
                break
            t = max(movable, key=nat)
            sl[t] = l
            sload[h] -= 1
            sload[l] += 1
        else:
            break

    sl_wu = {}
    if bug.get("stateless_learning_stage"):
        for t in SL:
            o = [m for m in members if t in act[m] and not leaving[m]]
            if o and sl[t] != o[0]:
                sl_wu[t] = sl[t]      # BUG: a stateless move gets a learning stage like a stateful one
                sl[t] = o[0]

    # ---- Standbys: learners count as replicas; staying members only
    need = min(nsb, max(0, len(staying) - 1))
    tot = {m: 0 for m in members}
    for t in SF:
        tot[active[t]] += 1
        if t in learner:
            tot[learner[t]] += 1
    standby = {t: [] for t in SF}
    for t in SF:
        have = 1 if (t in learner and not leaving[learner[t]]) else 0
        while have < need:
            spool = members if opt.get("standbys_anywhere") else staying
            c = [m for m in spool if m != active[t] and learner.get(t) != m and m not in standby[t]]
            if not c:
                break
            m = min(c, key=lambda m: (0 if t in sby[m] else 1, 0 if (t in lags[m] and caught(m, t)) else 1,
                                      Fraction(tot[m], cap[m]), idkey(m)))
            standby[t].append(m)
            tot[m] += 1
            have += 1

    out = {m: {"active": [], "standby": [], "warmup": []} for m in members}
    for t, m in active.items():
        out[m]["active"].append(t)
    for t, m in sl.items():
        out[m]["active"].append(t)
    for t, m in learner.items():
        out[m]["standby" if t in demoted else "warmup"].append(t)
    for t, m in sl_wu.items():
        out[m]["warmup"].append(t)
    for t, ms in standby.items():
        for m in ms:
            out[m]["standby"].append(t)
    for m in out:
        for k in out[m]:
            out[m][k].sort(key=nat, reverse=opt.get("list_order") == "rev")
    if opt.get("omit_empty"):
        out = {m: {k: v for k, v in d.items() if v} for m, d in out.items()}
    ans = {"assignment": out}
    if not opt.get("omit_empty"):
        ans["probing_rebalance"] = False
    if opt.get("member_order") == "rev":
        ans["assignment"] = dict(reversed(list(ans["assignment"].items())))
    return ans


def correct(v):
    return assign(v)


def _mk(name, **kw):
    o = {k: v for k, v in kw.items() if k in ("ties", "promote_pick", "task_order", "learner_pick", "shed",
                                                 "list_order", "omit_empty", "member_order", "keep_all_learners",
                                                 "direct_ready_standby", "no_balance", "cap", "standbys_anywhere")}
    b = {k: v for k, v in kw.items() if k not in o}
    f = lambda v: assign(v, o, b)  # noqa: E731
    f.__name__ = name
    globals()[name] = f


# correct variants
_mk("v_high", ties="high")
_mk("v_rev", task_order="rev", list_order="rev", member_order="rev")
_mk("v_omit", omit_empty=True)
_mk("v_plain", learner_pick="plain")
_mk("v_shedhigh", shed="high")
_mk("v_idonly", promote_pick="idonly")
_mk("v_keepall", keep_all_learners=True)
_mk("v_direct", direct_ready_standby=True)
_mk("v_nobal", no_balance=True)
_mk("v_cap", cap=True)
_mk("v_sbany", standbys_anywhere=True)
_mk("v_mix2", direct_ready_standby=True, standbys_anywhere=True, cap=True, ties="high")
_mk("v_mix", ties="high", shed="high", learner_pick="plain", omit_empty=True, list_order="rev")


# seeded bugs
for _b in ["stateless_learning_stage", "sb_learner_leaving", "demote_kept", "promote_leaving_learner",
           "orphan_to_leaving", "prev_owner_learner", "drop_on_join", "drop_after_failover",
           "one_leaving_only", "new_leaving_learns", "learners_to_leaving", "promote_unready",
           "forget_revoked", "leaving_never_learned", "stateless_stay", "evict_leaving_cold",
           "standby_before_learner", "no_leaving_tag"]:
    _mk("b_" + _b, **{_b: True})
