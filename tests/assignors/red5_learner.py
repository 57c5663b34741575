"""Red team 5: an independent KIP-429 (seeds 001/000) learner assignor, plus seeded bugs.

Seed 001 "Assignment Algorithm": actives to ready learners, then previous owners, then unready
learners, then standby holders, then instances with room; existing learners kept; new learners
picked out of the heaviest loaded instances, for new / standby-holding instances first; then
standbys. Leaving members (Version 2.0) get their tasks learned elsewhere and receive nothing
new. Balance (Version 4.0) is a strict-improvement local search, so it cannot shuffle for ever.
In the learner protocol an owner revokes a being-learned task at the join: its owner is read
from `lags` (a member with state for it and no copy of it in any list).
"""
from __future__ import annotations

from fractions import Fraction

from tests.assignors.red5_common import INF, View, empty_answer, finish, local_search, member_key, subtopology, task_key


def make(
    promote_behind=False,         # bug: a learner promoted while still behind
    leaving_gets_new_active=False,  # bug: an orphan active may go to a leaving member
    leaving_never_learned=False,  # bug: a leaving member's tasks are never learned elsewhere
    drop_learners=False,          # bug: existing learners not kept (re-picked, possibly elsewhere)
    shuffle_ties=False,           # bug: balance moves accepted when they do not improve (v1's endless shuffle)
    learner_on_leaving=False,     # bug: learners may be placed on leaving members
    ignore_revoked_owner=False,   # bug: a revoked (being-learned) task not given back to its owner
    cap_learners=False,           # variant: at most max_warmup_replicas learners
    standbys_on_leaving=False,    # correct variant: standbys may stay on leaving members
    learner_hop=False,            # bug: an unready learner is moved to another staying member each rebalance
    never_promote=False,          # bug: a ready learner never takes its task over (its owner keeps it)
):
    def assign(view_dict):
        v = View(view_dict)
        members = v.members
        ans = empty_answer(members)
        if not members:
            return finish(ans)
        stay = [m for m in members if not v.leaving[m]] or list(members)
        cap = v.cap

        def ready(m, t):
            if promote_behind:
                return True
            return v.caught_up(m, t)

        def lag_or_inf(m, t):
            lg = v.lag(m, t)
            return INF if lg is None else lg

        def load(layout, m):
            return Fraction(sum(1 for o in layout.values() if o == m), cap[m])

        # ---- actives
        active = {}
        for t in v.tasks:
            holders = v.holders(t, "active")
            learners = [m for m in v.holders(t, "warmup") if not v.leaving[m]]
            if not v.stateful[t]:
                if holders and not v.leaving[holders[0]]:
                    active[t] = holders[0]
                continue  # orphan stateless placed below
            rl = [] if never_promote else [m for m in learners if ready(m, t)]
            if rl:
                active[t] = min(rl, key=member_key)
                continue
            if holders:
                active[t] = holders[0]
                continue
            if not ignore_revoked_owner:
                # revoked at the join: a member with state and no copy in any list
                revoked = [m for m in members
                           if v.lag(m, t) is not None and (m, t) not in v.role]
                if revoked:
                    active[t] = min(revoked, key=lambda m: (lag_or_inf(m, t), v.leaving[m], member_key(m)))
                    continue
            if learners:
                active[t] = min(learners, key=lambda m: (lag_or_inf(m, t), member_key(m)))
                continue
        # orphans: most caught-up non-leaving member, least loaded
        pool = members if leaving_gets_new_active else stay
        for t in v.tasks:
            if t in active:
                continue
            best = min(v.rank(m, t) for m in pool)
            cands = [m for m in pool if v.rank(m, t) == best]
            active[t] = min(cands, key=lambda m: (load(active, m) + Fraction(1, cap[m]),
                                                  sum(1 for x, o in active.items() if o == m and subtopology(x) == subtopology(t)),
                                                  member_key(m)))

        # ---- learners
        learner = {}  # task -> member
        if not drop_learners:
            for t in v.tasks:
                if not v.stateful[t]:
                    continue
                for m in v.holders(t, "warmup"):
                    if m != active[t] and not v.leaving[m] and t not in learner:
                        learner[t] = m
        lpool = members if learner_on_leaving else stay
        # a leaving owner's tasks are learned elsewhere
        if not leaving_never_learned:
            for t in v.tasks:
                o = active[t]
                if not v.leaving[o] or t in learner:
                    continue
                if not v.stateful[t]:
                    # stateless: moves at once, nothing to learn
                    cands = [m for m in stay if m != o]
                    if cands:
                        active[t] = min(cands, key=lambda m: (load(active, m), member_key(m)))
                    continue
                planned = dict(active)
                planned.update(learner)
                cands = [m for m in lpool if m != o and not (v.leaving[m] and not learner_on_leaving)]
                if not cands:
                    continue
                if learner_on_leaving:
                    # bug: the learner goes to the next member by id, leaving or not
                    learner[t] = min(cands, key=member_key)
                    continue
                learner[t] = min(cands, key=lambda m: (
                    0 if v.role.get((m, t)) == "standby" else 1,
                    v.rank(m, t),
                    load(planned, m), member_key(m)))

        # balance among staying members: planned layout = actives moved to their learners
        planned = dict(active)
        planned.update(learner)
        movable = lambda t: (planned[t] == active[t]) and not v.leaving[active[t]]

        if shuffle_ties:
            from tests.assignors import red5_common as _c
            lay = dict(planned)
            for t in sorted(lay, key=task_key):
                if not movable(t):
                    continue
                a = lay[t]
                for b in stay:
                    if b != a and (len([x for x in lay.values() if x == a]) >= len([x for x in lay.values() if x == b]) + 1):
                        lay[t] = b
                        break
            target = lay
        else:
            target = local_search({t: planned[t] for t in v.tasks}, members, cap, lambda t, m: movable(t) and m in stay)
        for t in v.tasks:
            if target[t] == planned[t]:
                continue
            if not v.stateful[t]:
                active[t] = target[t]  # stateless: moved at once
            else:
                learner[t] = target[t]
        if learner_hop:
            for t in list(learner):
                m = learner[t]
                if v.role.get((m, t)) == "warmup" and not v.caught_up(m, t):
                    others = [x for x in stay if x != m and x != active[t]
                              and (x, t) not in v.role]
                    if others:
                        learner[t] = min(others, key=member_key)
        if cap_learners:
            keep = sorted(learner, key=lambda t: (0 if v.role.get((learner[t], t)) == "warmup" else 1, task_key(t)))[: v.maxw]
            learner = {t: learner[t] for t in keep}

        for t, m in active.items():
            ans[m]["active"].append(t)
        for t, m in learner.items():
            ans[m]["warmup"].append(t)

        # ---- standbys
        for t in v.tasks:
            if not v.stateful[t]:
                continue
            taken = {active[t], learner.get(t)}
            cands = [m for m in members if m not in taken and (standbys_on_leaving or not v.leaving[m])]
            cands.sort(key=lambda m: (v.rank(m, t), 0 if v.role.get((m, t)) == "standby" else 1,
                                      sum(1 for x in v.tasks if v.role.get((m, x)) == "standby"),
                                      member_key(m)))
            for m in cands[: v.nsb]:
                ans[m]["standby"].append(t)
        return finish(ans, False)

    return assign


assign = make()
assign_capped = make(cap_learners=True)
promote_behind = make(promote_behind=True)
leaving_gets_new_active = make(leaving_gets_new_active=True)
leaving_never_learned = make(leaving_never_learned=True)
drop_learners = make(drop_learners=True)
shuffle_ties = make(shuffle_ties=True)
learner_on_leaving = make(learner_on_leaving=True)
ignore_revoked_owner = make(ignore_revoked_owner=True)
standbys_on_leaving = make(standbys_on_leaving=True)
learner_hop = make(learner_hop=True)
never_promote = make(never_promote=True)  # added after red team 5: learner-takes-over
