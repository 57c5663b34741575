"""The per-rebalance properties as named data, and which rule set promises which.

A property is a name, a one-line promise, a kind (``always``: holds of every answer;
``measure``: a figure reported in ``Verdict.measure`` whose status the rule set decides), the
rule sets that promise it and a pure check ``(view, assignment) -> Verdict``. A rule set
that reads a property differently has its own check in ``checks_by_rules``.

Rule sets (:data:`RULE_SETS`) name the protocol whose promises an assignor is judged by:
``sticky`` and ``eager`` (the pre-KIP-429 sticky assignor), ``learner`` (KIP-429), ``ha``
(KIP-441; external assignors are judged by ``ha`` unless the user picks another).

==================  ======  =====  =======  ==
property            sticky  eager  learner  ha
==================  ======  =====  =======  ==
one-active          yes     yes    yes      yes
no-colocation       yes     yes    yes      yes
warmup-bound        yes     yes    no       yes
standby-count       yes     yes    yes(+)   yes
caught-up-active    no      no     no       yes
fixpoint            yes     yes    no       yes
stable              yes     yes    no       yes
balanced            yes*    yes*   no       yes
staying-learners    no      no     yes      no
caught-up-standby   no      no     no       yes
learner-handover    no      no     yes      no
learners-kept       no      no     yes      no
learner-takes-over  no      no     yes      no
stateless-at-once   no      no     yes      no
orphan-to-copy      no      no     yes      no
==================  ======  =====  =======  ==

(+) a learner (warmup-role copy) counts as a standby: KIP-429 turns standbys into learners
(:func:`~rebalproof.properties.copies.standby_count_learners`). Under every rule set a copy
beyond the active is a standby or an extra copy *by count*, whatever its label (Kafka's warmups
are standbys): relabelling standby <-> warmup changes no verdict
(:mod:`rebalproof.properties.common`, "Labels"; ``tests/test_labels.py``).
(*) instance balance in every answer; a probing rebalance excuses nothing and subtopology
spread is measured, not promised (:func:`~rebalproof.properties.balanced.balanced_at_once`).

Examples
--------
>>> [p.name for p in PER_ASSIGNMENT]
['one-active', 'no-colocation', 'warmup-bound', 'standby-count', 'caught-up-active', 'fixpoint', 'stable', 'balanced', 'staying-learners', 'caught-up-standby', 'learner-handover', 'learners-kept', 'learner-takes-over', 'stateless-at-once', 'orphan-to-copy']
>>> from rebalproof.model.assignment import Assignment
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="0_0"),), members=(Member(id="I1"),))
>>> [str(v.status) for v in check_assignment(view, Assignment.build({"I1": {"active": ["0_0"]}}), rules="learner")]
['holds', 'holds', 'not promised', 'holds', 'not promised', 'not promised', 'not promised', 'not promised', 'holds', 'not promised', 'holds', 'holds', 'holds', 'holds', 'holds']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from rebalproof.errors import InputError
from rebalproof.model.assignment import Assignment
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.balanced import balanced, balanced_at_once
from rebalproof.properties.handover import learner_handover, orphan_to_copy
from rebalproof.properties.copies import no_colocation, one_active, standby_count, standby_count_learners, warmup_bound, warmup_bound_ha
from rebalproof.properties.lag import caught_up_active
from rebalproof.properties.leaving import stateless_at_once, staying_learners
from rebalproof.properties.learners import learner_takes_over, learners_kept
from rebalproof.properties.stability import fixpoint, stable, stable_settled, stable_sticky
from rebalproof.properties.standby_rank import caught_up_standby
from rebalproof.properties.verdict import Status, Verdict

__all__ = [
    "RULE_SETS",
    "KINDS",
    "AssignmentProperty",
    "PER_ASSIGNMENT",
    "property_named",
    "check_assignment",
    "check_rules",
]

RULE_SETS = ("sticky", "eager", "learner", "ha")
"""The rule sets an assignor can be judged by, in a fixed order."""

KINDS = ("always", "measure")

Check = Callable[[RebalanceInput, Assignment], Verdict]


@dataclass(frozen=True, kw_only=True)
class AssignmentProperty:
    """One per-rebalance property as named data (docs/DESIGN.md "The property catalogue").

    Attributes
    ----------
    name : str
        Stable name used in reports, traces and the CLI (``one-active``).
    promise : str
        What it promises, in one line.
    kind : str
        ``"always"`` (every answer) or ``"measure"`` (a figure whose status the rule set decides).
    promised_by : frozenset of str
        Rule sets that promise it; for the others its verdict is ``NOT_PROMISED``.
    check : callable
        ``check(view, assignment) -> Verdict``, the default reading.
    checks_by_rules : mapping
        Rule set -> another reading of the same property, where one differs.
    not_promised_because : str
        Why the other rule sets do not promise it (said in their ``NOT_PROMISED`` verdict).
    source : str
        Where the promise comes from.
    """

    name: str
    promise: str
    kind: str
    promised_by: frozenset
    check: Check
    checks_by_rules: Mapping[str, Check] = field(default_factory=dict)
    not_promised_because: str = ""
    source: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        unknown = (set(self.promised_by) | set(self.checks_by_rules)) - set(RULE_SETS)
        if unknown:
            raise ValueError(f"unknown rule sets {sorted(unknown)}; the rule sets are {RULE_SETS}")

    def judge(self, view: RebalanceInput, assignment: Assignment, *, rules: str) -> Verdict:
        """The verdict under ``rules``: its reading of the check, or ``NOT_PROMISED`` with the figures."""
        check_rules(rules)
        verdict = self.checks_by_rules.get(rules, self.check)(view, assignment)
        if rules in self.promised_by:
            return verdict
        return Verdict(
            property=self.name,
            status=Status.NOT_PROMISED,
            message=f"not promised by the {rules} rules ({self.not_promised_because}); for information: {verdict.status}, {verdict.message}",
            measure=dict(verdict.measure),
        )


def check_rules(rules: str) -> str:
    """``rules`` if it names a rule set, else an :class:`InputError` naming them."""
    if rules not in RULE_SETS:
        raise InputError(f"unknown rule set {rules!r}; the rule sets are {', '.join(RULE_SETS)}")
    return rules


_ALL = frozenset(RULE_SETS)

PER_ASSIGNMENT: tuple[AssignmentProperty, ...] = (
    AssignmentProperty(
        name="one-active",
        promise="every task has exactly one active copy, on a member of the group",
        kind="always",
        promised_by=_ALL,
        check=one_active,
        source="KIP-441 Assignment Algorithm 1 and 4; KIP-429 Assignment Algorithm",
    ),
    AssignmentProperty(
        name="no-colocation",
        promise="no instance holds two copies (active, standby or warmup) of one task",
        kind="always",
        promised_by=_ALL,
        check=no_colocation,
        source="KIP-441 Constraints and Cost Function",
    ),
    AssignmentProperty(
        name="warmup-bound",
        promise="copies of stateful tasks beyond the active and the standbys number at most max_warmup_replicas",
        kind="always",
        promised_by=frozenset({"sticky", "eager", "ha"}),
        check=warmup_bound,
        checks_by_rules={"ha": warmup_bound_ha},
        not_promised_because="KIP-429 v1 puts no bound on learner tasks",
        source="KIP-441 max_warmup_replicas, Assignment Algorithm 3",
    ),
    AssignmentProperty(
        name="standby-count",
        promise="each stateful task has min(num_standby_replicas, non-leaving members - 1) standbys (copies beyond the active, whatever their label)",
        kind="always",
        promised_by=_ALL,
        check=standby_count,
        checks_by_rules={"learner": standby_count_learners},
        source="KIP-441 Assignment Algorithm 2; KIP-429 Standby Task Utilization (a learner counts as a standby)",
    ),
    AssignmentProperty(
        name="caught-up-active",
        promise="each stateful active is on a most-caught-up instance",
        kind="always",
        promised_by=frozenset({"ha"}),
        check=caught_up_active,
        not_promised_because="only KIP-441 ranks instances by lag",
        source="KIP-441 Assignment Algorithm 1, Computing the most-caught-up instances",
    ),
    AssignmentProperty(
        name="fixpoint",
        promise="a valid, balanced, caught-up current assignment is returned unchanged, with no probing rebalance",
        kind="always",
        promised_by=frozenset({"sticky", "eager", "ha"}),
        check=fixpoint,
        not_promised_because="KIP-429 v1 delays balance to a later version, so its assignments keep moving",
        source="KIP-441 Assignment Algorithm 5",
    ),
    AssignmentProperty(
        name="stable",
        promise="a stateless task stays with its current owner unless moving it is needed for balance, in a rebalance that changes nothing else (sticky, eager: and no two owners' stateful actives are exchanged without need)",
        kind="always",
        promised_by=frozenset({"sticky", "eager", "ha"}),
        check=stable,
        checks_by_rules={"ha": stable_settled, "sticky": stable_sticky, "eager": stable_sticky},
        not_promised_because="KIP-429 moves stateless tasks at once, with no stickiness promise",
        source="KIP-441 Assignment Algorithm 6",
    ),
    AssignmentProperty(
        name="balanced",
        promise="the actives are balanced (ha: by instance and subtopology, or a probing rebalance is scheduled; sticky, eager: by instance)",
        kind="measure",
        promised_by=frozenset({"sticky", "eager", "ha"}),
        check=balanced,
        checks_by_rules={"sticky": balanced_at_once, "eager": balanced_at_once},
        not_promised_because="KIP-429 v1 cares for smooth transition over balance",
        source="KIP-441 Defining balance, Iterative Balancing Assignments",
    ),
    AssignmentProperty(
        name="staying-learners",
        promise="no member marked leaving is given a task to learn (a learner of a stateful task it did not hold and is not caught up on, an active it has no state for, or a copy it held, still behind, tagged a learner)",
        kind="always",
        promised_by=frozenset({"learner"}),
        check=staying_learners,
        not_promised_because="KIP-441 and the sticky baseline know no leaving members: an assignor may treat one as ordinary",
        source="KIP-429 Scale Down: the leader performs the learner assignment among members without intention of leaving",
    ),
    AssignmentProperty(
        name="caught-up-standby",
        promise="no standby, new or kept, left to a member that must restore while a member caught up on the task "
        "holds no copy of it",
        kind="always",
        promised_by=frozenset({"ha"}),
        check=caught_up_standby,
        not_promised_because="only KIP-441 ranks instances by lag",
        source="KIP-441 Assignment Algorithm 2: standby tasks to the next-most-caught-up instances",
    ),
    AssignmentProperty(
        name="learner-handover",
        promise="a stateful active leaves its owner (leaving or not) only for a member ready for it: caught up on it "
        "(a ready learner, a caught-up standby)",
        kind="always",
        promised_by=frozenset({"learner"}),
        check=learner_handover,
        not_promised_because="only KIP-429 moves tasks through learners; KIP-441 judges moves by lag (caught-up-active)",
        source="KIP-429: a currently active task is reassigned only to workers declared ready to serve it",
    ),
    AssignmentProperty(
        name="learners-kept",
        promise="while an owner keeps a stateful task, a learner still restoring it keeps it too "
        "(one of them, in any role; leaving members not judged)",
        kind="always",
        promised_by=frozenset({"learner"}),
        check=learners_kept,
        not_promised_because="only KIP-429 keeps its learners; KIP-441 re-plans its warmups at every rebalance",
        source="KIP-429 Assignment Algorithm: keep existing learner tasks' assignment unchanged",
    ),
    AssignmentProperty(
        name="learner-takes-over",
        promise="a stateful task with a ready learner (caught up, on a member not leaving) gets its active from one of them",
        kind="always",
        promised_by=frozenset({"learner"}),
        check=learner_takes_over,
        not_promised_because="only KIP-429 has learners; KIP-441 promotes its warmups by balance (probing rebalances)",
        source="KIP-429 Assignment Algorithm: assign active tasks to instances with learner tasks that indicate ready first",
    ),
    AssignmentProperty(
        name="stateless-at-once",
        promise="no stateless task is left active on a leaving member while another member stays",
        kind="always",
        promised_by=frozenset({"learner"}),
        check=stateless_at_once,
        not_promised_because="KIP-441 and the sticky baseline know no leaving members (an assignor may treat one as ordinary)",
        source="KIP-429 Stateful vs Stateless Tasks: for stateless tasks the ownership transfer should happen immediately, without a learning stage",
    ),
    AssignmentProperty(
        name="orphan-to-copy",
        promise="a stateful task whose owner is gone goes to a staying member holding a copy of it (a learner or a standby), when one does",
        kind="always",
        promised_by=frozenset({"learner"}),
        check=orphan_to_copy,
        not_promised_because="KIP-441 places actives by lag (caught-up-active), not by the copies held",
        source="KIP-429 Assignment Algorithm: active tasks to unready learner owners, then to standby holders, then to resource available instances",
    ),
)


def property_named(name: str) -> AssignmentProperty:
    """The per-assignment property called ``name``; an :class:`InputError` listing the names otherwise."""
    for prop in PER_ASSIGNMENT:
        if prop.name == name:
            return prop
    raise InputError(f"unknown property {name!r}; the per-assignment properties are {', '.join(p.name for p in PER_ASSIGNMENT)}")


def check_assignment(view: RebalanceInput, assignment: Assignment, *, rules: str) -> tuple[Verdict, ...]:
    """One verdict per property of :data:`PER_ASSIGNMENT`, in order, judged by ``rules``.

    Properties ``rules`` does not promise come back ``NOT_PROMISED`` (with what the check found,
    for information), never left out. An unknown rule set is an :class:`InputError`.
    """
    check_rules(rules)
    return tuple(prop.judge(view, assignment, rules=rules) for prop in PER_ASSIGNMENT)
