"""Red team round 3: seeded bugs, each one realistic mistake in a correct red3 assignor.

Run as ``py:tests.assignors.red3_seeded:NAME``, or ``exec:python3 tests/assignors/red3_seeded.py
NAME`` (one JSON line in, one out). Each docstring names the seed sentence the bug breaks.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.assignors import red3_flow, red3_learner, red3_search  # noqa: E402
from tests.assignors.red3_common import View, fair_bounds, finish  # noqa: E402


# --- KIP-441, on red3_flow (min-cost flow) ---------------------------------------------------

def no_lower_bounds(inp):
    """The balance constraints go into the flow as capacities only (no lower bounds), so a
    member may be left with nothing. Seed 002 "Defining 'balance'": "The instance with the most
    tasks has no more than 1 more task than the instance with the least tasks"."""
    return red3_flow._assign(inp, lambda n, c, total: (0, fair_bounds(n, c, total)[1]))


def subtopology_blind(inp):
    """Balance in total only: each (instance, subtopology) edge is left unbounded. Seed 002:
    "subtopology balance ... we want to spread the tasks for a subtopology evenly over the
    cluster"."""
    view = View(inp)
    target = red3_flow.target_assignment(view, view.members, fair_bounds,
                                         sub_bounds=lambda n, c, total: (0, n))
    answer, probing = red3_flow.plan(view, view.members, target)
    return finish(answer, probing)


def warmups_carried_free(inp):
    """Only warmups made in this rebalance are counted against max_warmup_replicas; the ones
    still warming up from the last one are not. Seed 002: "max_warmup_replicas: ... the maximum
    number of extra replicas to assign"; "limits the number of extra tasks that can be assigned
    at a time"."""
    view = View(inp)
    target = red3_flow.target_assignment(view, view.members)
    answer, probing = red3_flow.plan(view, view.members, target,
                                     costs_budget=lambda t, m: t not in view.warmup[m])
    return finish(answer, probing)


def unhosted_state_ignored(inp):
    """Lags are read only for the tasks a member hosts (active, standby, warmup); the state it
    still has of a task it gave up (revoked in a cooperative hand-over, or a dropped standby)
    counts as no state. Seed 002: "This KIP introduces a race by reporting the lag on an
    instance's stores, not just the assigned ones" and "The new field, TaskLags would encode the
    lag for every store that the instance hosts"; requirement 1 (most caught-up instances)."""
    inp = copy.deepcopy(inp)
    for m in inp["members"]:
        hosted = set(m.get("active") or []) | set(m.get("standby") or []) | set(m.get("warmup") or [])
        m["lags"] = {t: lag for t, lag in (m.get("lags") or {}).items() if t in hosted}
    return red3_flow.assign(inp)


def standby_sticky_over_rank(inp):
    """Standbys stay with whoever holds a copy first, rank second. Seed 002 requirement 2: "the
    algorithm must assign standby tasks to the next-most-caught-up instances"."""
    view = View(inp)
    target = red3_flow.target_assignment(view, view.members)

    def key(t, load):
        return lambda m: (0 if view.holds_copy(t, m) else 1, view.rank(t, m), load[m] / view.capacity[m])

    answer, probing = red3_flow.plan(view, view.members, target, standby_key=key)
    return finish(answer, probing)


def warming_standby_dropped(inp):
    """A move's destination "already warms up as a standby" is read from the input, not from the
    answer: where the answer takes that standby away (a better ranked instance gets it), the
    destination is left with no copy and no warmup. Seed 002: "The task movements are
    accomplished by assigning the task as a standby task to the destination instance"."""
    view = View(inp)
    target = red3_flow.target_assignment(view, view.members)
    answer, probing = red3_flow.plan(view, view.members, target, warming=lambda t, m: t in view.standby[m])
    return finish(answer, probing)


def probe_needs_a_warmup(inp):
    """The probing rebalance is asked only when the answer holds a warmup: a move whose
    destination warms up as a standby asks none. Seed 002: "It also plans task movements to
    gradually improve assignment balance over time, stopping when it is able to create a
    balanced assignment"; "If the leader determines that the current assignment is optimally
    balanced already, then it does not need to trigger any probing rebalances"."""
    out = red3_flow.assign(inp)
    out["probing_rebalance"] = any(roles["warmup"] for roles in out["assignment"].values())
    return out


def standby_is_the_warmup(inp):
    """A pending move's destination is made one of the task's standbys (so it warms up without
    spending the warmup budget), ahead of better ranked instances. Seed 002: "The task
    movements are accomplished by assigning the task as a standby task to the destination
    instance", read over requirement 2: "the algorithm must assign standby tasks to the
    next-most-caught-up instances"."""
    view = View(inp)
    target = red3_flow.target_assignment(view, view.members)

    def key(t, load):
        dest = target[t]
        return lambda m: (0 if m == dest else 1, view.rank(t, m), 0 if view.holds_copy(t, m) else 1,
                          load[m] / view.capacity[m])

    answer, probing = red3_flow.plan(view, view.members, target, standby_key=key)
    return finish(answer, probing)


# --- KIP-441, on red3_search (two-stage exact search) --------------------------------------

def stateless_capacity_blind(inp):
    """Stateless tasks are packed as if every member ran one thread. Seed 002: "the assignor
    just packs the stateless tasks into the cluster to achieve the best balance it can";
    "even distribution of work ... instead of letting one thread have more tasks than
    another"."""
    view = View(inp)
    target = red3_search.target_assignment(view, view.members,
                                           stateless_capacity={m: 1 for m in view.members})
    answer, probing = red3_search.plan(view, view.members, target)
    return finish(answer, probing)


def crash_on_lost_memory(inp):
    """Finds the newcomers from previous_members whenever some member already owns a task (a
    fresh group is special-cased), so after a leader fail-over, where previous_members is null
    (the new leader has lost the last round's memory), it crashes. Seed 001: "Leader crash
    could cause a missing of historical assignment information ... Leader switch in this case
    is not a big concern"."""
    if any(m.get("active") for m in inp["members"]):
        newcomers = set(m["id"] for m in inp["members"]) - set(inp.get("previous_members"))
        del newcomers
    return red3_search.assign(inp)


# --- KIP-429, on red3_learner ------------------------------------------------------------------

class _UnreadyPromoted(red3_learner.Plan):
    def is_ready(self, t, m):
        return True


def learner_unready_promoted(inp):
    """Every learner is promoted at the next rebalance, ready or not. Seed 001: "When new member
    finally finishes the replay task, it will re-attempt to join the group to indicate that it
    is 'ready' to take on real active tasks"; "if given task is currently active, reassignment
    must happen only to workers who are declared ready to serve this task"."""
    return red3_learner.run(inp, plan_class=_UnreadyPromoted)


class _RevokedOwnerForgotten(red3_learner.Plan):
    def previous_owner(self, t):
        return self.v.owner.get(t)


def revoked_owner_forgotten(inp):
    """Previous owners are read from the members' active lists only; a task being learned is
    revoked by its owner when the rebalance begins, so it looks unowned and goes to its (not
    ready) learner. Seed 001: "Every time when a rebalance begins, the task owners will revoke
    the being learned tasks and join group"; "Assign active tasks: To instances with learner
    tasks that indicate 'ready', To previous owners, To unready learner tasks owners"."""
    return red3_learner.run(inp, plan_class=_RevokedOwnerForgotten)


class _StatelessStayOnLeaving(red3_learner.Plan):
    def may_keep_stateless(self, m):
        return m in self.v.members


def stateless_stay_on_leaving(inp):
    """A stateless task stays with its owner even when the owner is leaving, so a leaving member
    running one never gets "the instruction to revoke all its active tasks". Seed 001: "the
    leaving member will shut down itself once received the instruction to revoke all its active
    tasks"; "For stateless tasks the ownership transfer should happen immediately"."""
    return red3_learner.run(inp, plan_class=_StatelessStayOnLeaving)


class _MemberReady(red3_learner.Plan):
    def is_ready(self, t, m):
        v = self.v
        return any(v.rank(x, m) == 0 for x in v.warmup[m])


def partial_promotes_all(inp):
    """Version 3.0 (learner.partial_rebalance): a member that rejoins because one learner is
    ready gets every one of its learners promoted. Seed 001: "new member will proactively
    trigger rebalance when it finishes restoring one learner task state each time, until it
    eventually finishes all the replaying"; "reassignment must happen only to workers who are
    declared ready to serve this task"."""
    return red3_learner.run(inp, plan_class=_MemberReady)


class _LeavingAsGone(red3_learner.Plan):
    def previous_owner(self, t):
        owner = self.v.owner.get(t) or red3_learner.revoked_owner(self.v, t)
        return None if owner is not None and self.v.leaving[owner] else owner


def leaving_handed_over_cold(inp):
    """A member marked leaving is treated as already gone: its actives are handed at once to
    the staying members (the least loaded, with no state), with no learner phase. Seed 001
    "Scale Down Running Application": "it is also favorable to initiate learner tasks before
    actually shutting down the instances ... During rebalance assignment, leader will perform
    the learner assignment among members without intention of leaving. And the leaving member
    will shut down itself once received the instruction to revoke all its active tasks"."""
    return red3_learner.run(inp, plan_class=_LeavingAsGone)


BUGS = [
    "no_lower_bounds", "subtopology_blind", "warmups_carried_free", "unhosted_state_ignored",
    "standby_sticky_over_rank", "warming_standby_dropped", "probe_needs_a_warmup",
    "stateless_capacity_blind", "crash_on_lost_memory", "learner_unready_promoted",
    "revoked_owner_forgotten", "stateless_stay_on_leaving", "standby_is_the_warmup",
    "partial_promotes_all", "leaving_handed_over_cold",
]


def main(argv):
    fn = globals()[argv[1]]
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(fn(json.loads(line)), separators=(",", ":")) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
