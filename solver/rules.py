"""The hard rules of each protocol, as named data, with a plain-Python checker.

A rule set names the protocol whose hard rules an answer must keep (the same names as
:data:`rebalproof.properties.RULE_SETS`). Every rule *instance* has a readable name --
``one-active[0_1]``, ``no-colocation[0_1@I2]`` -- used alike by the Z3 encoding
(:mod:`rebalproof.solver.encode`, tracked constraints), by this module's checker (which
re-verifies every model Z3 returns, independently of Z3) and by the sentences of
:func:`rebalproof.solver.oracle.explain`.

==================  ======  =====  =======  ==  =====================================================
rule                sticky  eager  learner  ha  source
==================  ======  =====  =======  ==  =====================================================
one-active          yes     yes    yes      yes KIP-441 Assignment Algorithm 1, 4
no-colocation       yes     yes    yes      yes KIP-441 Constraints and Cost Function
standby-count       yes     yes    yes      yes KIP-441 Assignment Algorithm 2
stateless-replica   yes     yes    yes      yes KIP-429 Stateful vs Stateless Tasks: nothing to restore
warmup-bound        yes     yes    no       yes KIP-441 max_warmup_replicas
caught-up-active    no      no     no       yes KIP-441 Assignment Algorithm 1, most-caught-up
leaving             yes     yes    yes      yes KIP-429 v2: learners only on non-leaving members
learner-handover    no      no     yes      no  KIP-429: a currently active task only to a ready worker
learners-kept       no      no     yes      no  KIP-429: keep existing learner tasks' assignment unchanged
learners-all-kept   no      no     yes      no  the same, no learner dropped for max_warmup_replicas (own)
learner-takes-over  no      no     yes      no  KIP-429: active tasks to instances with learners that indicate "ready" first
stateless-at-once   no      no     yes      no  KIP-429 Stateful vs Stateless Tasks: ownership transfer happens immediately
orphan-to-copy      no      no     yes      no  KIP-429: an ownerless task to unready learner owners, then standby holders, first
fixpoint            yes     yes    no       yes KIP-441 Assignment Algorithm 5
probing-rebalance   no      no     no       yes KIP-441 Probing Rebalances
==================  ======  =====  =======  ==  =====================================================

Readings (each the one :mod:`rebalproof.properties` uses, except ``stateless-replica``,
``leaving``, ``probing-rebalance`` and ``learners-all-kept``, which the properties do not check):

Those four are the solver's own choices (:data:`OWN_RULES`): every answer the solver gives
keeps them, but another implementation's answer is not judged by them
(:func:`rebalproof.solver.oracle.conforms` judges :attr:`RuleSet.judged`): the seeds leave each
open (KIP-441's requirement 2 literally asks standbys "for every task"; KIP-441 knows no
leaving members; "it can stop performing probing rebalances" allows, not orders; KIP-429 keeps
learners, but an implementation may honour the view's ``max_warmup_replicas``), so an
implementation reading them otherwise is still correct, as the catalogue says.

- ``standby-count[t]``: a stateful task has at least ``min(num_standby_replicas, n - 1)``
  replicas (``standby`` or ``warmup`` role: labels do not count) on members other than its
  active (``n``: non-leaving members). Nothing about stateless tasks, as in the catalogue.
- ``stateless-replica[t]``: a stateless task has no standby or warmup: KIP-429 "Stateful vs
  Stateless Tasks", "for stateless tasks the ownership transfer should happen immediately
  without the need of a learning stage, because there is nothing to restore". Stricter than
  the properties: KIP-441 forbids no such copy (its requirement 2 even reads "at least
  num.standby.replicas ... for every task"), so the catalogue accepts one; without the rule an
  optimiser would scatter copies no objective counts.
- ``warmup-bound``: extra copies, ``max(0, copies - 1 - min(num_standby_replicas, members - 1))``
  summed over the stateful tasks, are at most ``max_warmup_replicas`` (whatever the roles).
- ``caught-up-active[t@m]``: a stateful active only on a member
  :func:`rebalproof.properties.lag.acceptable_active_holders` accepts.
- ``leaving[t@m]``: a leaving member gets no task it did not hold going in (in any role, or as
  caught-up state of a task it revoked at this join, which nobody owns going in: KIP-429's
  being-learned revocation),
  unless every member is leaving. Stricter than the ``ha`` properties, which also accept an
  assignor that treats a leaving member as an ordinary one; without it an optimiser would park
  work on leaving members, which balance does not count.
- ``learner-handover[t@m]``: a stateful active held going in (by any member, leaving ones
  too) stays with an owner or goes to a member ready for it, never to ``m``, which is not caught
  up on it (:func:`rebalproof.properties.handover.handover_owners`, the property's own reading).
- ``learners-kept[t]``: while an active of stateful ``t`` stays with a member that owned it going
  in, one of its learners still restoring keeps a copy (in any role)
  (:func:`rebalproof.properties.learners.kept_learners`, the property's own reading); one
  instance per task, or, when more learners go in than ``max_warmup_replicas``, one instance
  ``learners-kept`` bounding how many tasks lose theirs to that surplus.
- ``learners-all-kept[t]``: the solver's own (in :data:`OWN_RULES`), stated only where that
  surplus is not 0: its answers keep every learner ``learners-kept`` judges. An implementation
  may drop the learners beyond ``max_warmup_replicas``, but the reference keeps what KIP-429
  says to keep ("Keep existing learner tasks' assignment unchanged") rather than minimise
  ``restore`` by dropping them.
- ``learner-takes-over[t]``: a stateful task with a ready learner gets its active from one of
  them (:func:`rebalproof.properties.learners.ready_learners`, the property's own reading; a
  restriction of the actives' hosts, as ``learner-handover`` is).
- ``stateless-at-once[t@m]``: a stateless task is not active on a leaving member while another
  member stays (:func:`rebalproof.properties.leaving.stateless_at_once`; a restriction of the
  actives' hosts).
- ``orphan-to-copy[t]``: a stateful task the view shows no owner of goes to a staying member
  holding a copy of it, when one does (:func:`rebalproof.properties.handover.orphan_holders`;
  a restriction of the actives' hosts).
- ``fixpoint``: when the current assignment is valid, balanced and caught up
  (:func:`rebalproof.properties.stability.fixpoint_premise` finds nothing), it is the only
  allowed answer (KIP-441: "it must not alter the assignment").
- ``probing-rebalance``: an answer asks for a probing rebalance exactly when it is not
  balanced (:func:`rebalproof.model.balance.is_balanced`): KIP-441 "once the leader makes a
  balanced assignment, it can stop performing probing rebalances", and until then it probes.

Examples
--------
>>> from rebalproof.model.assignment import Assignment
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="0_1"),), members=(Member(id="I2"), Member(id="I3")))
>>> [v.name for v in violations(view, Assignment.build({"I2": {"active": ["0_1"]}, "I3": {"active": ["0_1"]}}), "sticky")]
['one-active[0_1]']
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from rebalproof.errors import InputError
from rebalproof.model.assignment import ROLES, Assignment, MemberAssignment
from rebalproof.model.balance import is_balanced
from rebalproof.model.names import sorted_ids
from rebalproof.model.ranking import is_caught_up
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.common import current_assignment, required_standbys, standby_allowance, treated_as_leaving
from rebalproof.properties.handover import handover_owners, orphan_holders
from rebalproof.properties.learners import droppable, kept_learners, ready_learners
from rebalproof.properties.lag import acceptable_active_holders
from rebalproof.properties.stability import fixpoint_pins_copies, fixpoint_premise, same_actives, same_copies

__all__ = ["RuleSet", "RULE_SETS", "OWN_RULES", "rule_set", "Facts", "Violation", "violations", "rule_of"]

OWN_RULES = frozenset({"stateless-replica", "leaving", "probing-rebalance", "learners-all-kept"})
"""Rules the solver keeps in its own answers but judges no other implementation by (module doc)."""


@dataclass(frozen=True, kw_only=True)
class RuleSet:
    """Which hard rules a protocol has (see the module table)."""

    name: str
    summary: str
    warmup_bound: bool
    caught_up_active: bool
    fixpoint: bool
    probing: bool
    handover: bool = False
    learners: bool = False
    takes_over: bool = False
    stateless_leave: bool = False
    orphans: bool = False

    @property
    def rules(self) -> tuple[str, ...]:
        """The rule names in force, in a fixed order."""
        out = ["one-active", "no-colocation", "standby-count", "stateless-replica"]
        if self.warmup_bound:
            out.append("warmup-bound")
        if self.caught_up_active:
            out.append("caught-up-active")
        out.append("leaving")
        if self.handover:
            out.append("learner-handover")
        if self.learners:
            out.extend(("learners-kept", "learners-all-kept"))
        if self.takes_over:
            out.append("learner-takes-over")
        if self.stateless_leave:
            out.append("stateless-at-once")
        if self.orphans:
            out.append("orphan-to-copy")
        if self.fixpoint:
            out.append("fixpoint")
        if self.probing:
            out.append("probing-rebalance")
        return tuple(out)

    @property
    def judged(self) -> tuple[str, ...]:
        """The rules another implementation's answer is judged by: :attr:`rules` but :data:`OWN_RULES`."""
        return tuple(r for r in self.rules if r not in OWN_RULES)


RULE_SETS: dict[str, RuleSet] = {
    r.name: r
    for r in (
        RuleSet(name="sticky", summary="pre-KIP-429 sticky assignor", warmup_bound=True, caught_up_active=False, fixpoint=True, probing=False),
        RuleSet(name="eager", summary="eager rebalancing with the sticky assignor", warmup_bound=True, caught_up_active=False, fixpoint=True, probing=False),
        RuleSet(name="learner", summary="KIP-429 learner tasks", warmup_bound=False, caught_up_active=False, fixpoint=False, probing=False, handover=True, learners=True, takes_over=True, stateless_leave=True, orphans=True),
        RuleSet(name="ha", summary="KIP-441 high-availability assignor", warmup_bound=True, caught_up_active=True, fixpoint=True, probing=True),
    )
}


def rule_set(rules: str | RuleSet) -> RuleSet:
    """The :class:`RuleSet` called ``rules``; an :class:`InputError` naming the rule sets otherwise."""
    if isinstance(rules, RuleSet):
        return rules
    try:
        return RULE_SETS[rules]
    except (KeyError, TypeError):
        raise InputError(f"unknown rule set {rules!r}; the rule sets are {', '.join(RULE_SETS)}") from None


def rule_of(name: str) -> str:
    """The rule of an instance name: ``one-active[0_1]`` -> ``one-active``."""
    return name.split("[", 1)[0]


class Facts:
    """What the rules derive from one view, computed once: who may hold what.

    Attributes
    ----------
    view, rules
        The input and the :class:`RuleSet`.
    staying : tuple of str
        Non-leaving members (balance is counted over them).
    treat_leaving : frozenset of str
        Members the ``leaving`` rule applies to (none when every member is leaving).
    """

    def __init__(self, view: RebalanceInput, rules: str | RuleSet):
        self.view = view
        self.rules = rule_set(rules)
        self.staying = tuple(m.id for m in view.members if not m.leaving)
        self.treat_leaving = treated_as_leaving(view)
        self.required = required_standbys(view)
        self.allowance = standby_allowance(view)

    def may_hold(self, task_id: str, member_id: str) -> bool:
        """The ``leaving`` rule: a leaving member keeps only what it held going in.

        "Held" includes a stateful task it revoked at this join but still reports caught-up
        state for: KIP-429 owners revoke *being-learned* tasks at each join, and while the
        learner is not ready the previous owner gets the task back (seed 001, "Scale Down"). A
        revoked task has no owner going in; one some member still owns is not the leaving
        member's to take, caught-up state or not (red team 15: the reference moved a staying
        owner's only task onto a leaving member, balance not counting it).
        """
        if member_id not in self.treat_leaving:
            return True
        member = self.view.member(member_id)
        if task_id in member.copies:
            return True
        return (self.view.task(task_id).stateful and is_caught_up(self.view, member_id, task_id)
                and not self.view.owners(task_id))

    @cached_property
    def eligible(self) -> dict[str, tuple[str, ...]]:
        """Task -> members that may hold a copy of it (the ``leaving`` rule)."""
        return {t: tuple(m for m in self.view.member_ids if self.may_hold(t, m)) for t in self.view.task_ids}

    @cached_property
    def active_hosts(self) -> dict[str, tuple[str, ...]]:
        """Task -> members that may hold its active (``leaving``; ``caught-up-active`` under ha; ``learner-handover``,
        ``learner-takes-over``, ``stateless-at-once`` and ``orphan-to-copy`` under learner)."""
        out = {}
        for task in self.view.tasks:
            hosts = self.eligible[task.id]
            if self.rules.stateless_leave and not task.stateful:
                hosts = tuple(m for m in hosts if m not in self.treat_leaving)
            if self.rules.caught_up_active and task.stateful:
                ok = set(acceptable_active_holders(self.view, task.id))
                hosts = tuple(m for m in hosts if m in ok)
            if self.rules.handover and task.stateful:
                kept, refused = handover_owners(self.view, task.id)
                hosts = tuple(m for m in hosts if not kept or m not in refused)
            for _, _, among in self.hosts_among:
                if task.id in among:
                    hosts = tuple(m for m in hosts if m in among[task.id])
            out[task.id] = hosts
        return out

    @cached_property
    def hosts_among(self) -> tuple[tuple[str, str, dict[str, tuple[str, ...]]], ...]:
        """The rules that give a task's active to one of some members, each ``(rule, its sentence
        with {t}, {hosts} and {where}, stateful task -> those members)`` for the tasks that have
        some: ``learner-takes-over`` (its ready learners) and ``orphan-to-copy`` (with no owner in
        the view, the staying members holding a copy), none outside ``learner``. The plain
        checker, the Z3 encoding and :attr:`active_hosts` read them from here."""
        rules = (
            ("learner-takes-over", "task {t} has a ready learner on {hosts} but its active {where}", self.rules.takes_over, ready_learners),
            ("orphan-to-copy", "task {t} has no owner going in and a copy on {hosts}, but its active {where}", self.rules.orphans, orphan_holders),
        )
        out = []
        for rule, sentence, on, reading in rules:
            found = {t: reading(self.view, t) for t in self.view.stateful_task_ids} if on else {}
            out.append((rule, sentence, {t: hosts for t, hosts in found.items() if hosts}))
        return tuple(out)

    @cached_property
    def kept_learners(self) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
        """Stateful task -> (its owners going in, its restoring learners), for the tasks ``learners-kept`` judges (none outside ``learner``)."""
        if not self.rules.learners:
            return {}
        found = {t: kept_learners(self.view, t) for t in self.view.stateful_task_ids}
        return {t: pair for t, pair in found.items() if pair[1]}

    @cached_property
    def learner_drops(self) -> int:
        """How many tasks of :attr:`kept_learners` may lose their learners (the learners going in beyond ``max_warmup_replicas``)."""
        return droppable(self.view) if self.kept_learners else 0

    @cached_property
    def caught_up(self) -> dict[str, frozenset]:
        """Stateful task -> eligible members caught up on it (lag <= acceptable_recovery_lag)."""
        return {
            t: frozenset(m for m in self.eligible[t] if is_caught_up(self.view, m, t)) for t in self.view.stateful_task_ids
        }

    @cached_property
    def owner(self) -> dict[str, str]:
        """Task -> its previous active owner, when that owner is a staying member (moves are counted off it)."""
        out = {}
        for t in self.view.task_ids:
            owners = [m for m in self.view.owners(t) if m not in self.treat_leaving and not self.view.member(m).leaving]
            if len(owners) == 1:
                out[t] = owners[0]
        return out

    @cached_property
    def fixpoint_pins_copies(self) -> bool:
        """Whether ``fixpoint`` (where :attr:`fixpoint_current` is set) pins every copy or only the
        actives (:func:`rebalproof.properties.stability.fixpoint_pins_copies`)."""
        return fixpoint_pins_copies(self.view)

    @cached_property
    def fixpoint_current(self) -> Assignment | None:
        """The current assignment when the ``fixpoint`` rule pins it (every copy, or its actives:
        :attr:`fixpoint_pins_copies`), else None. It is the solver's own answer either way."""
        if not self.rules.fixpoint or fixpoint_premise(self.view):
            return None
        # labels do not count (properties/common.py, "Labels"): the premise found no extra copy,
        # so every replica going in is one of the standbys, and the solver writes it as one
        current = current_assignment(self.view)
        return Assignment(
            members={m: MemberAssignment(active=a.active, standby=a.standby + a.warmup) for m, a in current.members},
            probing_rebalance=False,
        )


@dataclass(frozen=True)
class Violation:
    """One broken rule instance: its name (``one-active[0_1]``) and a sentence saying why."""

    name: str
    sentence: str
    tasks: tuple[str, ...] = ()
    members: tuple[str, ...] = ()

    @property
    def rule(self) -> str:
        return rule_of(self.name)


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _say(ids) -> str:
    ids = list(ids)
    return ids[0] if len(ids) == 1 else f"{', '.join(ids[:-1])} and {ids[-1]}"


def violations(view: RebalanceInput, assignment: Assignment, rules: str | RuleSet, *, facts: Facts | None = None) -> tuple[Violation, ...]:
    """Every broken rule instance of ``assignment``, in rule order; empty when it keeps the rules.

    Plain Python, independent of Z3: this is what every Z3 model is re-verified against.
    A copy (in any role) on a member or of a task the input does not name is reported under
    ``one-active``, one instance ``one-active[t@m]`` per member and task, apart from the task's
    own ``one-active[t]`` (every way in rejects such answers first:
    :func:`rebalproof.model.codec.check_ids`).
    """
    facts = facts or Facts(view, rules)
    rs = facts.rules
    out: list[Violation] = []
    for m, a in assignment.members:
        for t in dict.fromkeys(a.copies):
            if not view.has_member(m) or not view.has_task(t):
                stranger = f"member {m}" if not view.has_member(m) else f"task {t}"
                out.append(Violation(f"one-active[{t}@{m}]", f"{m} is given task {t}, but {stranger} is not in the input: one-active", (t,), (m,)))
    held: dict[str, dict[str, list[str]]] = {t: {} for t in view.task_ids}  # task -> member -> roles listed
    for m, a in assignment.members:
        if view.has_member(m):
            for role in ROLES:
                for t in getattr(a, role):
                    if t in held:
                        held[t].setdefault(m, []).append(role)
    for t, by_member in held.items():
        holders = sorted_ids(m for m, h in by_member.items() if "active" in h)
        if len(holders) != 1:
            said = "has no active copy" if not holders else f"is active on {_say(holders)}"
            out.append(Violation(f"one-active[{t}]", f"task {t} {said}: one-active", (t,), holders))
    for t, by_member in held.items():
        for m in sorted_ids(by_member):
            if len(by_member[m]) > 1:
                out.append(Violation(f"no-colocation[{t}@{m}]", f"{m} holds task {t} {_times(len(by_member[m]))} ({_say(by_member[m])}): no-colocation", (t,), (m,)))
    for t in view.stateful_task_ids:
        standbys = sorted_ids(m for m, h in held[t].items() if ("standby" in h or "warmup" in h) and "active" not in h)
        if len(standbys) < facts.required:
            on = f" (on {_say(standbys)})" if standbys else ""
            out.append(Violation(f"standby-count[{t}]", f"task {t} has {len(standbys)} standby{'s' if len(standbys) != 1 else ''}{on}, needs {facts.required}: standby-count", (t,), standbys))
    for t in view.stateless_task_ids:
        replicas = sorted_ids(m for m, h in held[t].items() if "standby" in h or "warmup" in h)
        if replicas:
            out.append(Violation(f"stateless-replica[{t}]", f"stateless task {t} has replicas on {_say(replicas)}, but a stateless task has no state to keep: stateless-replica", (t,), replicas))
    if rs.warmup_bound:
        extra = {t: max(0, len(held[t]) - 1 - facts.allowance) for t in view.stateful_task_ids}
        total = sum(extra.values())
        if total > view.config.max_warmup_replicas:
            which = tuple(t for t, n in extra.items() if n)
            out.append(Violation("warmup-bound", f"{total} extra copies (of {_say(which)}) exceed max_warmup_replicas {view.config.max_warmup_replicas}: warmup-bound", which))
    if rs.caught_up_active:
        for t in view.stateful_task_ids:
            actives = [m for m, h in held[t].items() if "active" in h]
            ok = acceptable_active_holders(view, t)
            for m in sorted_ids(actives):
                if m not in ok:
                    out.append(Violation(f"caught-up-active[{t}@{m}]", f"task {t} is active on {m}, which is not among its most caught-up members ({_say(ok)}): caught-up-active", (t,), (m,)))
    for t, by_member in held.items():
        for m in sorted_ids(by_member):
            if not facts.may_hold(t, m):
                out.append(Violation(f"leaving[{t}@{m}]", f"{m} is leaving and did not hold task {t}, yet gets it: leaving", (t,), (m,)))
    if rs.handover:
        for t in view.stateful_task_ids:
            kept, refused = handover_owners(view, t)
            actives = {m for m, h in held[t].items() if "active" in h}
            if kept and not actives & set(kept):
                for m in sorted_ids(actives & set(refused)):
                    out.append(Violation(f"learner-handover[{t}@{m}]", f"task {t} is taken from {_say(kept)} and given to {m}, which is not ready for it (not caught up on it): learner-handover", (t,), (m, *kept)))
    dropped = []  # (task, the owners keeping it, its learners), every learner of it dropped
    for t, (owners, learners) in facts.kept_learners.items():
        staying_with = sorted_ids(m for m, h in held[t].items() if "active" in h and m in owners)
        if staying_with and not any(m in held[t] for m in learners):
            dropped.append((t, staying_with, learners))

    def each_dropped(rule):  # one instance per task (learners-all-kept always; learners-kept with no surplus)
        return (Violation(f"{rule}[{t}]", f"task {t} stays with {_say(kept)} but its restoring learner{'s' if len(learners) > 1 else ''} on {_say(learners)} {'are' if len(learners) > 1 else 'is'} dropped: {rule}", (t,), sorted_ids({*learners, *kept}))
                for t, kept, learners in dropped)

    if facts.learner_drops == 0:
        out.extend(each_dropped("learners-kept"))
    else:
        if len(dropped) > facts.learner_drops:
            which = tuple(t for t, _, _ in dropped)
            out.append(Violation("learners-kept", f"{len(dropped)} tasks ({_say(which)}) stay with an owner but lose their restoring learners, more than the {facts.learner_drops} learners going in beyond max_warmup_replicas: learners-kept", which))
        out.extend(each_dropped("learners-all-kept"))
    for rule, sentence, among in facts.hosts_among:
        for t, hosts in among.items():
            actives = sorted_ids(m for m, h in held[t].items() if "active" in h)
            if not set(actives) & set(hosts):
                where = f"goes to {_say(actives)}" if actives else "goes nowhere"
                said = sentence.format(t=t, hosts=_say(hosts), where=where)
                out.append(Violation(f"{rule}[{t}]", f"{said}: {rule}", (t,), sorted_ids({*hosts, *actives})))
    if rs.stateless_leave:
        for t in view.stateless_task_ids:
            for m in sorted_ids(m for m, h in held[t].items() if "active" in h and m in facts.treat_leaving):
                out.append(Violation(f"stateless-at-once[{t}@{m}]", f"stateless task {t} is left active on {m}, which is leaving: stateless-at-once", (t,), (m,)))
    if facts.fixpoint_current is not None:
        if facts.fixpoint_pins_copies and not same_copies(assignment, facts.fixpoint_current):
            out.append(Violation("fixpoint", "the current assignment is valid, balanced and caught up, so it must come back unchanged: fixpoint"))
        elif not facts.fixpoint_pins_copies and not same_actives(assignment, facts.fixpoint_current):
            out.append(Violation("fixpoint", "the current assignment is valid, balanced and caught up, so its actives must stay (all copies are not within one by every reading, so replicas may move): fixpoint"))
    if rs.probing:
        balanced = is_balanced(view, assignment)
        if assignment.probing_rebalance == balanced:
            said = "is balanced but asks for a probing rebalance" if balanced else "is not balanced and asks for no probing rebalance"
            out.append(Violation("probing-rebalance", f"the answer {said}: probing-rebalance"))
    return tuple(out)
