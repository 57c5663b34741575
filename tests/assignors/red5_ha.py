"""Red team 5: an independent KIP-441 (seed 002) high-availability assignor, plus seeded bugs.

Shape (not the one of examples/ha_assignor.py or tests/assignors/*):
  1. constrained layout C: every stateful task on a most-caught-up member (rank floored at
     acceptable_recovery_lag, <= is caught up), the owner kept when it is one, then a
     best-first local search (moves and swaps) on a potential (per-thread load, then
     subtopology spread) restricted to most-caught-up destinations; stateless tasks free.
  2. unconstrained layout U: the same search from C with any destination.
  3. every task whose U-destination differs from its C-owner gets a warmup there (unless that
     member already restores it as a standby), at most max_warmup_replicas, existing warmups first.
  4. standbys: num_standby_replicas per stateful task on the next-most-caught-up members.
  5. probing_rebalance iff U != C (not yet balanced).

`make(**bugs)` builds variants; `assign` is the correct one.
"""
from __future__ import annotations

from tests.assignors.red5_common import INF, View, empty_answer, finish, local_search, member_key, task_key


def make(
    probe_forever=False,          # bug: probing rebalance requested on every answer
    never_promote=False,          # bug: warmups never become active (C ignores caught-up warmups)
    promote_early=False,          # bug: warmup promoted as soon as it exists, caught up or not
    move_caught_up_owner=False,   # bug: actives rotated off a caught-up owner in a balanced layout
    drop_standbys_on_leave=False, # bug: standbys not re-created when a member disappears
    ignore_capacity=False,        # bug: capacities read as 1 thread each
    ignore_capacity_once=False,   # bug: capacities ignored only when a member is new
    stateless_shuffle=False,      # bug: stateless tasks rotate every rebalance
    warmups_unbounded=False,      # bug: max_warmup_replicas ignored
    leaving_gets_active=False,    # (learner protocol only) n/a here
    warmup_forget=False,          # bug: warmups dropped at every probing rebalance, re-chosen
    standby_sticky_ranks=False,   # bug: standbys kept on old holders even if others more caught up
    no_probe=False,               # bug: never asks for a probing rebalance
    tie_by_load=False,            # correct by req. 1 (not by req. 6's "should"): among equally
                                  # most-caught-up members the owner is not preferred
):
    def assign(view_dict):
        v = View(view_dict)
        members = v.members
        cap = dict(v.cap)
        if ignore_capacity:
            cap = {m: 1 for m in members}
        if ignore_capacity_once and v.prev is not None and any(m not in v.prev for m in members):
            cap = {m: 1 for m in members}
        ans = empty_answer(members)
        if not members:
            return finish(ans)

        def best_rank(t):
            return min(v.rank(m, t) for m in members)

        def most_caught_up(t, m):
            if not v.stateful[t]:
                return True
            if promote_early and v.role.get((m, t)) == "warmup":
                return True
            if never_promote and v.role.get((m, t)) == "warmup" and v.role.get((m, t)) != "active":
                # reads a warmup as never caught up
                return False
            r = v.rank(m, t)
            return r == best_rank(t) and (r != INF or True)

        # 1. initial placement
        layout = {}
        owner_of = {}
        for t in v.tasks:
            hs = v.holders(t, "active")
            if hs:
                owner_of[t] = hs[0]

        def potential_pref(t, m):
            # tie preference: caught-up warmup holders first, then standby holders
            role = v.role.get((m, t))
            return 0 if role == "warmup" else (1 if role == "standby" else 2)

        for t in v.tasks:
            o = owner_of.get(t)
            if o is not None and most_caught_up(t, o):
                if tie_by_load and v.rank(o, t) != 0:
                    continue  # a restoring owner is re-placed among the equally behind
                layout[t] = o
        # orphans (or owners no longer most caught up): one at a time, least loaded candidate
        for t in v.tasks:
            if t in layout:
                continue
            cands = [m for m in members if most_caught_up(t, m)]
            if not cands:
                cands = list(members)

            def load_key(m):
                # the same potential the local search descends (an insertion of least increase),
                # so that a follow-up rebalance re-places a handed-over task where it was sent
                from tests.assignors.red5_common import Load
                held = [x for x, o in layout.items() if o == m]
                ld = Load(members, cap)
                return (ld.phi_member(held + [t], m) - ld.phi_member(held, m),
                        potential_pref(t, m), member_key(m))

            layout[t] = min(cands, key=load_key)

        if stateless_shuffle:
            # rotate every stateless task to the next member, each rebalance
            for t in v.tasks:
                if not v.stateful[t] and len(members) > 1:
                    i = members.index(layout[t])
                    layout[t] = members[(i + 1) % len(members)]

        if move_caught_up_owner:
            # swap the first two stateful tasks' owners whenever both members are caught up on both
            sf = [t for t in v.tasks if v.stateful[t]]
            if len(sf) >= 2:
                a, b = sf[0], sf[-1]
                ma, mb = layout[a], layout[b]
                if ma != mb and v.caught_up(mb, a) and v.caught_up(ma, b):
                    layout[a], layout[b] = mb, ma

        placed = {t for t in v.tasks if owner_of.get(t) != layout.get(t)}

        def move_pref(t, m):
            # at equal gain, move a task placed in this answer (no owner) rather than an owned one:
            # a follow-up rebalance then completes the hand-over it was sent for
            return (0 if t in placed else 10) + potential_pref(t, m)

        C = local_search(layout, members, cap, lambda t, m: most_caught_up(t, m), move_pref)
        U = local_search(C, members, cap, lambda t, m: True, potential_pref)

        for t, m in C.items():
            ans[m]["active"].append(t)

        # 3. standbys: next most caught up (excluding the active holder)
        sb = {}
        for t in v.tasks:
            if not v.stateful[t]:
                continue
            cands = [m for m in members if m != C[t]]
            if drop_standbys_on_leave and v.prev is not None and any(p not in v.m for p in v.prev):
                cands = [m for m in cands if v.role.get((m, t)) == "standby"]
            if standby_sticky_ranks:
                key = lambda m: (0 if v.role.get((m, t)) == "standby" else 1, v.rank(m, t),
                                 0 if U[t] == m else 1, member_key(m))
            else:
                key = lambda m: (v.rank(m, t), 0 if v.role.get((m, t)) == "standby" else 1,
                                 0 if U[t] == m else 1,
                                 sum(1 for x in v.tasks if v.role.get((m, x)) == "standby"),
                                 member_key(m))
            sb[t] = sorted(cands, key=key)[: v.nsb]
            for m in sb[t]:
                ans[m]["standby"].append(t)

        # 4. warmups toward U (a standby already there restores it instead)
        want = [t for t in v.tasks if v.stateful[t] and U[t] != C[t] and U[t] not in sb[t]]
        # existing warmups first, then task order
        want.sort(key=lambda t: (0 if v.role.get((U[t], t)) == "warmup" else 1, task_key(t)))
        limit = len(want) if warmups_unbounded else v.maxw
        n = 0
        for t in want:
            dest = U[t]
            if warmup_forget and v.role.get((dest, t)) == "warmup":
                continue  # bug: drops the warmup it had, re-asks next time
            if n >= limit:
                break
            ans[dest]["warmup"].append(t)
            n += 1

        probing = probe_forever or (U != C)
        if no_probe:
            probing = False
        return finish(ans, probing)

    return assign


assign = make()
probe_forever = make(probe_forever=True)
never_promote = make(never_promote=True)
promote_early = make(promote_early=True)
move_caught_up_owner = make(move_caught_up_owner=True)
drop_standbys_on_leave = make(drop_standbys_on_leave=True)
ignore_capacity = make(ignore_capacity=True)
ignore_capacity_once = make(ignore_capacity_once=True)
stateless_shuffle = make(stateless_shuffle=True)
warmups_unbounded = make(warmups_unbounded=True)
warmup_forget = make(warmup_forget=True)
standby_sticky_ranks = make(standby_sticky_ranks=True)
tie_by_load = make(tie_by_load=True)
no_probe = make(no_probe=True)
