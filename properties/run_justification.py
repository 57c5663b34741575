"""Why each run property is promised: its seed sentence, who promises it, what a correct
implementation can be forced to do (#10 item 5; docs/DESIGN.md "Per run of the group model").

Named data beside :data:`~rebalproof.properties.run.RUN_PROPERTIES`, one entry per property:
``quote`` is word for word from the seed (the tests check it against the seed documents),
``forced`` says what a correct protocol + assignor may be made to do within the model, which
is exactly what the property must not count. A promise no seed sentence supports is reported as
a measure or *not promised*, never as a violation.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Justification", "JUSTIFICATIONS"]


@dataclass(frozen=True, kw_only=True)
class Justification:
    """The seed behind one run property."""

    seed: str  # "001" (KIP-429 draft), "000" (its later revision) or "002" (KIP-441), and the section
    quote: str
    forced: str  # what a correct implementation can be forced to do, which the property tolerates


JUSTIFICATIONS: dict[str, Justification] = {
    "single-owner": Justification(
        seed="002 Consumer Rebalance Protocol: Stop-The-World Effect",
        quote="Once the revocations are processed, get assigned tasks",
        forced="leave a moved task with no owner between its revocation and the follow-up rebalance "
        "(cooperative), or from the join to the delivery (eager); never with two",
    ),
    "no-lost-task": Justification(
        seed="002 Assignment Algorithm, requirement 4",
        quote="Of course, the algorithm must also assign stateless tasks.",
        forced="leave a task without owner while a rebalance is in progress or needed (revoked, its owner "
        "gone): only stable states are judged",
    ),
    "warmup-bound": Justification(
        seed="002 Proposed Assignment/Rebalance Algorithm (configs)",
        quote="max_warmup_replicas*: A scalar integer representing the maximum number of extra  replicas to "
        "assign for the purpose of moving a task to an instance that has neither the active nor any standby "
        "replicas of that task assigned.",
        forced="keep the min(num_standby_replicas, members-1) required standbys besides the warmups; copies "
        "are counted, whatever the implementation calls them",
    ),
    "one-active": Justification(
        seed="002 Constraints and Cost Function",
        quote="This means, a particular task, like `0_8` would have an \"active\" (i.e., primary) copy and some "
        "number of \"standby\" copies (i.e., replicas).",
        forced="nothing: every answer can give each task exactly one active on a member of the group",
    ),
    "no-colocation": Justification(
        seed="002 Constraints and Cost Function",
        quote="We can't assign both an active and standby task with the same taskId to the same instance.",
        forced="nothing: an instance never needs two copies of one task",
    ),
    "standby-count": Justification(
        seed="002 Assignment Algorithm, requirement 2",
        quote="All computed assignments must have at least \"num.standby.replicas\" number of standby replicas "
        "for every task.",
        forced="give fewer standbys when the group has fewer other members: min(num_standby_replicas, members-1), "
        "leaving members not counted",
    ),
    "staying-learners": Justification(
        seed="001 Scale Down",
        quote="During rebalance assignment, leader will perform the learner assignment among members without "
        "intention of leaving.",
        forced="keep what a leaving member held, give it back a task it revoked at this join and still has "
        "caught-up state for, and treat nobody as leaving when every member is",
    ),
    "learner-handover": Justification(
        seed="001 Version 1.0, Scale Up Running Application",
        quote="By the end of first round of rebalance, there is no “real ownership transfer”.",
        forced="hand everything over when the owner is leaving (ready-handover judges that from the run), keep a "
        "task on an owner still restoring it, and move it to any member caught up on it (a ready learner, a "
        "caught-up standby, state held in no role)",
    ),
    "learners-kept": Justification(
        seed="001 Assignment Algorithm",
        quote="Keep existing learner tasks' assignment unchanged",
        forced="drop a learner whose task goes to another member (its owner gone, or a ready member taking it), "
        "a learner already caught up, one on a member now leaving, and every learner but one of a task; a "
        "restoring copy the task's standby slots can still hold is a standby, which need not stay",
    ),
    "learner-takes-over": Justification(
        seed="001 Assignment Algorithm",
        quote="To instances with learner tasks that indicate \"ready\"",
        forced="give the task to any one of several ready learners, keep a caught-up standby (not a learner) beside "
        "its owner, and leave a learner on a member marked leaving where it is",
    ),
    "stateless-at-once": Justification(
        seed="001 Stateful vs Stateless Tasks",
        quote="For stateless tasks the ownership transfer should happen immediately without the need of a learning stage, because there is nothing to restore.",
        forced="leave a stateless task on a leaving member when every member is leaving (someone must run it)",
    ),
    "orphan-to-copy": Justification(
        seed="001 Assignment Algorithm",
        quote="To unready learner tasks owners",
        forced="give a task whose owner revoked it at the join (state in no role, caught up or still restoring) to anyone, "
        "since a view cannot tell that owner from stale state; prefer a ready learner or a standby holder as it likes",
    ),
    "caught-up-standby": Justification(
        seed="002 Assignment Algorithm, requirement 2",
        quote="As a second priority, the algorithm must assign standby tasks to the next-most-caught-up instances.",
        forced="keep a standby that fell behind where it is (moves go through warmups), and choose freely among "
        "members that are all behind",
    ),
    "caught-up-active": Justification(
        seed="002 Assignment Algorithm, requirement 1",
        quote="The assignment algorithm is required to assign active stateful tasks to the most-caught-up-instances",
        forced="put an active on a member with partial or no state when nobody is caught up (the most caught-up "
        "are then the closest to catching up), e.g. after the only holder left",
    ),
    "fixpoint": Justification(
        seed="002 Assignment Algorithm, requirement 5",
        quote="The algorithm must converge: if the current assignment is already balanced, it must not alter "
        "the assignment.",
        forced="change an assignment that is not valid, balanced and caught up (a member joined, left or lags "
        "changed); only a settled one must come back unchanged",
    ),
    "stable": Justification(
        seed="002 Assignment Algorithm, requirement 6",
        quote="it should try not to shuffle stateless tasks randomly among nodes.",
        forced="move as many stateless tasks as the answer's load per member needs; only moves beyond the "
        "fewest are counted (sticky, eager: trade stateful actives between owners only where trading them back "
        "would move more, balance worse or be less caught up)",
    ),
    "balanced": Justification(
        seed="002 Iterative Balancing Assignments",
        quote="the assignment algorithm creates as balanced an assignment as possible while strictly assigning "
        "stateful tasks only among the most-caught-up instances.",
        forced="leave the actives unbalanced while a probing rebalance is scheduled (warmups moving state), or "
        "when no balanced assignment of the tasks over the capacities exists",
    ),
    "assignor-answers": Justification(
        seed="002 Assignment Algorithm",
        quote="We do specify some important properties of any implementation:",
        forced="nothing: an answer that is not an assignment for its input cannot be judged by anything else",
    ),
    "converges": Justification(
        seed="002 Iterative Balancing Assignments",
        quote="It also plans task movements to gradually improve assignment balance over time, stopping when "
        "it is able to create a balanced assignment.",
        forced="never settle in an unfair run (a restore that never finishes), restart with every membership "
        "change, and take ceil(stateful tasks / max_warmup_replicas) + 1 decisive rebalances after one "
        "added instance (\"just two rebalances\" when max_warmup_replicas covers every move); a cooperative "
        "follow-up is not decisive, nor a rebalance that only realizes moves planned before (restores finish "
        "one at a time, splitting the seed's one realizing rebalance)",
    ),
    "no-shuffle-cycle": Justification(
        seed="001 Version 1.0",
        quote="when the number of tasks are much smaller than total cluster capacity, we could fall in endless "
        "resource shuffling.",
        forced="cycle through one stable layout (probing rebalances that change nothing): that is not shuffling",
    ),
    "bounded-unavailability": Justification(
        seed="002 Assignment Algorithm, requirement 1; Proposed Assignment/Rebalance Algorithm",
        quote="In each rebalance, the leader assigns active tasks only to instances that are ready to begin "
        "processing them immediately. If there is no such instance, then it assigns the active task to the "
        "instance that is closest to catching up.",
        forced="change the owner of an unprocessed task when its holder left, crashed or is leaving, when the "
        "holder has no state for it, or to a member that caught up first (e.g. after a leader crash), and "
        "move it between members exactly as far behind (requirement 6 only says stability \"may not be easy "
        "to guarantee\"): measured, never counted; only a move to a less caught-up member is",
    ),
    "scale-down-completes": Justification(
        seed="001 Scale Down Running Application",
        quote="And the leaving member will shut down itself once received the instruction to revoke all its "
        "active tasks.",
        forced="be cut off by the scale-down timeout before the hand-over (v2); a version 1.0 assignor has no "
        "leaving tag, so it is checked on learner:leaving=false",
    ),
    "ready-handover": Justification(
        seed="001 Scale Up from Empty Group",
        quote="every task assignment during rebalance will adhere to the rule \"if given task is currently active, "
        "reassignment must happen only to workers who are declared ready to serve this task.\"",
        forced="keep a task with an owner that is not caught up on it (restoring), hand over the task of an owner "
        "that is gone (then unready learners come before standbys in the algorithm's order), move a task to "
        "any member caught up on it, in any role or none, and move a task its owner revoked at the join while "
        "still restoring it (the leader's view shows that owner only as behind state, which no assignor can "
        "tell from stale state on disk)",
    ),
    "task-moves": Justification(
        seed="002 Proposed Assignment/Rebalance Algorithm",
        quote="The task movements are accomplished by assigning the task as a standby task to the destination "
        "instance, and then rebalancing once those tasks are up to date.",
        forced="never move a task when the bounds leave nothing to gain (a vacuity verdict about the bounds)",
    ),
    "settles": Justification(
        seed="002 Probing Rebalances",
        quote="once the leader makes a balanced assignment, it can stop performing probing rebalances",
        forced="nothing within fair runs",
    ),
    "warmup-assigned": Justification(
        seed="002 Assignment Algorithm, requirement 3",
        quote="The assignment algorithm may assign extra standby tasks to warm up instances that it wants to "
        "move existing active or standby tasks to.",
        forced="make no warmup when no move improves balance within the bounds (\"may\")",
    ),
    "warmup-promoted": Justification(
        seed="002 Probing Rebalances",
        quote="Once the under-loaded instances are warm, a next rebalance would be able to produce a more "
        "balanced assignment.",
        forced="move no task to a member hosting a copy of it when no move improves balance within the bounds",
    ),
    "member-leaves": Justification(
        seed="002 Probing Rebalances",
        quote="an assignment's balance can only change in response to changes in the cluster, or changes to "
        "the topic metadata",
        forced="nothing: membership events are the model's, not the implementation's",
    ),
    "leader-failover": Justification(
        seed="001 Leader crash before scaling",
        quote="Leader crash could cause a missing of historical assignment information.",
        forced="nothing: the crash is the model's",
    ),
    "probing-rebalance": Justification(
        seed="002 Probing Rebalances",
        quote="we propose to have the leader trigger rebalances periodically, on a configured "
        "\"probing_rebalance_interval\"",
        forced="never probe when every answer within the bounds is balanced at once",
    ),
    "learner-ready": Justification(
        seed="001 Learner Task Essential",
        quote="When the restoration of learner task is complete, the stream instance will initiate a new "
        "JoinGroupRequest to call out another rebalance to do task transfer.",
        forced="make no learner when no move improves balance within the bounds (the built-in v1 at 3 "
        "instances and 1x2 tasks)",
    ),
    "scale-down-done": Justification(
        seed="001 Scale Down Running Application",
        quote="The plan is to use command line tool to tell certain stream members that a shutdown is on the "
        "way to be executed.",
        forced="nothing once a member is marked leaving and the pair promises scale-down",
    ),
}
