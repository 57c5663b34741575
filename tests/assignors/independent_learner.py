"""A KIP-429 learner assignor written from seed 001 (and its revision 000) alone.

Written before reading rebalproof's properties or built-in assignors, to
red-team the ``learner`` rules. It follows seed 001 "Assignment Algorithm" in
its order ("We shall assign tasks in the order of: active, learner and
standby"), with its own choices where the seed is silent:

- The view's ``warmup`` lists are the learners; a learner is *ready* when its
  member reports the task within ``acceptable_recovery_lag`` ("isReady").
- The *previous owner* of a stateful task is the member holding it as active;
  under the learner protocol an owner revokes a being-learned task when it
  joins, so failing that, a member with caught-up state for the task that holds
  no standby or learner of it (it just gave up processing it).
- New learners only where they improve balance (the heaviest instance at least
  two tasks per thread above the lightest, counting learners as the tasks they
  will take), and for every active of a leaving member (Version 2.0: "leader
  will perform the learner assignment among members without intention of
  leaving").
- Balance per stream thread, stateful and stateless tasks apart (Version 4.0:
  "balance the load separately for stateful tasks and stateless tasks").
- Stateless tasks move at once (seed 001 "Stateful vs Stateless Tasks"), kept
  where they are while within their share.
- Ties go to the lowest thread load, then the *highest* member id.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["assign"]


def _read(raw):
    cfg = raw.get("config") or {}
    tasks = [(t["id"], t.get("stateful", True)) for t in raw["tasks"]]
    members = {}
    for m in raw["members"]:
        members[m["id"]] = {
            "capacity": int(m.get("capacity", 1) or 1),
            "leaving": bool(m.get("leaving", False)),
            "active": set(m.get("active") or ()),
            "standby": set(m.get("standby") or ()),
            "warmup": set(m.get("warmup") or ()),
            "lags": dict(m.get("lags") or {}),
        }
    prev = raw.get("previous_members")
    return cfg, tasks, members, (None if prev is None else set(prev))


def _key_desc(mid):
    return tuple(-ord(c) for c in mid) + (1,)


def assign(raw):
    """Seed 001's incremental-rebalancing algorithm; see the module docstring."""
    cfg, tasks, members, previous = _read(raw)
    arl = int(cfg.get("acceptable_recovery_lag", 10000))
    nstandby = int(cfg.get("num_standby_replicas", 0))
    ids = sorted(members, reverse=True)
    staying = [m for m in ids if not members[m]["leaving"]] or ids
    new = [m for m in staying if previous is not None and m not in previous]
    stateful = sorted(t for t, s in tasks if s)
    stateless = sorted(t for t, s in tasks if not s)

    def caught_up(m, t):
        lags = members[m]["lags"]
        if t in lags:
            return lags[t] <= arl
        return t in members[m]["active"]

    def load(counts, m, extra=0):
        return Fraction(counts[m] + extra, members[m]["capacity"])

    def lightest(cands, counts):
        return min(cands, key=lambda m: (load(counts, m, 1), _key_desc(m)))

    # ---- Assign active tasks.
    active, counts = {}, {m: 0 for m in ids}
    learners = {t: [m for m in ids if t in members[m]["warmup"]] for t in stateful}
    for t in stateful:
        holders = [m for m in ids if t in members[m]["active"]]
        ready = [m for m in learners[t] if caught_up(m, t) and not members[m]["leaving"]]
        if not holders:
            holders = [m for m in ids if caught_up(m, t) and t not in members[m]["standby"]
                       and t not in members[m]["warmup"]]
        unready = [m for m in learners[t] if not members[m]["leaving"]]
        standbys = sorted((m for m in ids if t in members[m]["standby"]),
                          key=lambda m: (members[m]["leaving"], not caught_up(m, t)))
        for tier in (ready, holders, unready, standbys[:1], staying):
            if tier:
                owner = tier[0] if len(tier) == 1 else lightest(tier, counts)
                break
        active[t] = owner
        counts[owner] += 1

    # ---- Keep existing learners, unless promoted or their member leaves.
    learning = {t: {m for m in learners[t] if m != active[t] and not members[m]["leaving"]}
                for t in stateful}

    # ---- New learners: every active of a leaving member, then out of the
    # heaviest loaded instances while that improves balance.
    future = dict(counts)
    for t in stateful:
        for m in learning[t]:
            future[active[t]] -= 1
            future[m] += 1

    def learner_target(t, avoid):
        cands = [m for m in staying if m != active[t] and m not in avoid]
        if not cands:
            return None
        return min(cands, key=lambda m: (
            m not in new, t not in members[m]["standby"], load(future, m, 1), _key_desc(m)))

    for t in stateful:
        if members[active[t]]["leaving"] and not learning[t]:
            to = learner_target(t, set())
            if to is not None:
                learning[t].add(to)
                future[active[t]] -= 1
                future[to] += 1
    for _ in range(len(stateful)):
        heavy = max(staying, key=lambda m: (load(future, m), m))
        light = min(staying, key=lambda m: (load(future, m, 1), _key_desc(m)))
        if load(future, light, 1) >= load(future, heavy):
            break
        movable = [t for t in stateful if active[t] == heavy and not learning[t]]
        if not movable:
            break
        t = min(movable, key=lambda t: (t not in members[light]["standby"], t))
        learning[t].add(light)
        future[heavy] -= 1
        future[light] += 1

    # ---- Standbys: members without the active, the previous owner after a
    # transfer, then the least loaded; never on a learner of the same task.
    standby, sload = {}, {m: 0 for m in ids}
    for t in stateful:
        chosen = []
        for _ in range(nstandby):
            pool = [m for m in ids if m != active[t] and m not in chosen and m not in learning[t]]
            if not pool:
                break
            pick = min(pool, key=lambda m: (
                members[m]["leaving"], not caught_up(m, t), t not in members[m]["standby"],
                load(sload, m, 1), _key_desc(m)))
            chosen.append(pick)
            sload[pick] += 1
        standby[t] = set(chosen)

    # ---- Stateless tasks: at once, kept while within their share.
    scount = {m: 0 for m in ids}
    share = {m: 0 for m in ids}
    for _ in stateless:
        m = min(staying, key=lambda m: (load(share, m, 1), _key_desc(m)))
        share[m] += 1
    for t in stateless:
        keep = [m for m in staying if t in members[m]["active"] and scount[m] < share[m]]
        to = keep[0] if keep else min(staying, key=lambda m: (scount[m] - share[m], _key_desc(m)))
        active[t] = to
        scount[to] += 1

    out = {}
    for m in sorted(members):
        out[m] = {
            "active": sorted(t for t, o in active.items() if o == m),
            "standby": sorted(t for t in stateful if m in standby[t]),
            "warmup": sorted(t for t in stateful if m in learning[t]),
        }
    return {"assignment": out, "probing_rebalance": False}
