"""The oracle, deeper: how far an answer is from the optimum, why it breaks a rule, whether it conforms.

- :func:`distance` -- per objective, the answer's value beside the proven optimum.
- :func:`explain` -- sentences from unsat cores of the hard rules with the answer fixed
  (``task 0_1 is active on I2 and I3: one-active``), one per broken rule instance.
- :func:`conforms` -- a :class:`~rebalproof.properties.verdict.Verdict` saying whether one
  step's answer is one the protocol's hard rules allow (replay uses it where the protocol
  leaves choices open: tie-breaking is the implementation's, the rules are not).

Integration with ``rebalproof oracle`` is one call each: ``distance(view, answer, rules)``
gives ``to_json()`` / ``rows()`` for a table; ``explain(view, answer, rules)`` gives lines to
print under a violation.

Examples
--------
>>> from rebalproof.model.assignment import Assignment
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="0_1"),), members=(Member(id="I2"), Member(id="I3")))
>>> explain(view, Assignment.build({"I2": {"active": ["0_1"]}, "I3": {"active": ["0_1"]}}), "sticky")
['task 0_1 is active on I2 and I3: one-active']
>>> conforms(view, Assignment.build({"I2": {"active": ["0_1"]}, "I3": {}}), "sticky").status.value
'holds'
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

from rebalproof.model.assignment import Assignment
from rebalproof.model.balance import balanced_either
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.balanced import balanced as ha_balanced
from rebalproof.properties.catalogue import PER_ASSIGNMENT
from rebalproof.properties.verdict import Status, Verdict
from rebalproof.solver.encode import balanced_constraint, encode, given
from rebalproof.solver.objectives import OBJECTIVES, evaluate
from rebalproof.solver.optimize import optimal
from rebalproof.solver.rules import Facts, Violation, rule_of, rule_set, violations
from rebalproof.solver.staged import Deadline, check_named

__all__ = ["ObjectiveDistance", "Distance", "distance", "explain", "conforms", "balance_achievable", "BALANCE_MODES"]

BALANCE_MODES = ("hard", "achievable")
"""What the rules allow besides the hard rules: nothing more, or balance whenever some allowed answer is balanced."""


@dataclass(frozen=True)
class ObjectiveDistance:
    """One objective: the answer's value, the optimum's and whether the optimum is proven."""

    name: str
    value: int
    optimum: int | None
    lower: int
    proven: bool

    @property
    def gap(self) -> int | None:
        return None if self.optimum is None else self.value - self.optimum

    def to_json(self) -> dict:
        return {"name": self.name, "value": self.value, "optimum": self.optimum, "lower_bound": self.lower, "proven": self.proven, "gap": self.gap}


@dataclass(frozen=True)
class Distance:
    """The answer against the lexicographic optimum, objective by objective.

    ``optimum`` is the lexicographic optimum's value: an answer can beat it on a later objective
    only by losing on an earlier one. ``status`` is the optimiser's (``optimal`` /
    ``inconclusive`` / ``infeasible``).
    """

    rules: str
    status: str
    entries: tuple[ObjectiveDistance, ...]

    @property
    def optimal(self) -> bool | None:
        """True when the answer's values equal the proven optimum's; None when the optimum is not proven."""
        if self.status != "optimal":
            return None
        return all(e.value == e.optimum for e in self.entries)

    def rows(self) -> list[list[str]]:
        return [[e.name, str(e.value), "-" if e.optimum is None else str(e.optimum), "proven" if e.proven else f">= {e.lower}"] for e in self.entries]

    def to_json(self) -> dict:
        return {"rules": self.rules, "status": self.status, "optimal": self.optimal, "objectives": [e.to_json() for e in self.entries]}


def distance(view: RebalanceInput, assignment: Assignment, rules: str = "ha", *, timeout: float | None = None) -> Distance:
    """Per objective, ``(value, optimum)`` of ``assignment`` (see :class:`Distance`)."""
    facts = Facts(view, rules)
    values = evaluate(view, assignment, facts).as_dict()
    best = optimal(view, rules, timeout=timeout)
    entries = []
    for b in best.objectives:
        entries.append(ObjectiveDistance(name=b.name, value=values[b.name], optimum=b.value if b.proven else (b.value if best.status == "optimal" else None), lower=b.lower, proven=b.proven))
    return Distance(rules=facts.rules.name, status=best.status, entries=tuple(entries))


def explain(view: RebalanceInput, assignment: Assignment, rules: str = "ha", *, limit: int = 50, timeout: float | None = 30.0) -> list[str]:
    """Why ``assignment`` breaks the rules, one sentence per broken rule instance (empty: it keeps them).

    Each broken instance is found in an unsat core of the named hard rules plus the answer
    fixed (:func:`rebalproof.solver.encode.given`) -- the core's rules that are unsatisfiable
    with the answer alone -- then dropped, and the check repeated, each time on a fresh solver,
    until the rest is satisfiable (or ``limit``). The
    sentence is the plain checker's for that instance
    (:func:`rebalproof.solver.rules.violations`), so both must name the same instances (tests
    hold them equal). What no Boolean can say -- a task listed twice in one role, ids the input
    does not have -- comes from the plain checker directly.
    """
    facts = Facts(view, rules)
    plain = {v.name: v.sentence for v in violations(view, assignment, rules, facts=facts)}
    encodable = _encodable(view, assignment)
    # what the Booleans cannot say, and what the plain checker finds only because of it (a
    # fixpoint "changed" by listing a task twice), comes from the plain checker directly
    shown = {v.name for v in violations(view, encodable, rules, facts=facts)}
    unencodable = list(dict.fromkeys(_unencodable(view, assignment) + [name for name in plain if name not in shown]))
    out = [plain.get(name, name) for name in unencodable]
    enc = encode(view, rules, facts=facts)
    fixed = given(enc, encodable)
    rules_left = list(enc.constraints)
    deadline = Deadline(timeout)
    found: list[str] = []
    while len(found) < limit:
        result, _, core = check_named(rules_left + fixed, deadline=deadline, track=True)
        if result != z3.unsat:
            if result == z3.unknown:
                out.append("(explanation cut short: the solver timed out)")
            break
        suspects = [name for name in core if not name.startswith("given:")]
        if not suspects:
            raise AssertionError("an unsat core of the answer alone: the encoding of the answer is inconsistent")
        # a core may also hold rules the answer keeps (they close the conflict); with every
        # variable fixed, a rule is broken exactly when it is unsatisfiable with the answer alone
        broken = [n for n in suspects if check_named([(n, dict(rules_left)[n])] + fixed, deadline=deadline)[0] == z3.unsat] or suspects
        found.extend(broken)
        rules_left = [(n, c) for n, c in rules_left if n not in broken]
    for name in found:
        if name not in unencodable:
            out.append(plain.get(name) or _from_core(name))
    return out


def _from_core(name: str) -> str:
    return f"{name} is broken: {rule_of(name)}"


def _unencodable(view: RebalanceInput, assignment: Assignment) -> list[str]:
    """Instances the Booleans cannot show: unknown ids, a task twice in one role of one member."""
    names = []
    for m, a in assignment.members:
        for t in a.copies:
            if not view.has_member(m) or not view.has_task(t):
                names.append(f"one-active[{t}@{m}]")
        if not view.has_member(m):
            continue  # its copies are unknown ones, each said once above
        for role in ("active", "standby", "warmup"):
            listed = [x for x in getattr(a, role) if view.has_task(x)]
            for t in sorted(set(x for x in listed if listed.count(x) > 1)):
                names.append(f"no-colocation[{t}@{m}]")
    return list(dict.fromkeys(names))


def _encodable(view: RebalanceInput, assignment: Assignment) -> Assignment:
    members = {}
    for m, a in assignment.members:
        if view.has_member(m):
            members[m] = {r: sorted({t for t in getattr(a, r) if view.has_task(t)}) for r in ("active", "standby", "warmup")}
    return Assignment.build(members, probing_rebalance=assignment.probing_rebalance)


def balance_achievable(view: RebalanceInput, rules: str = "ha", *, timeout: float | None = None) -> bool | None:
    """Whether some answer keeping the hard rules is balanced (KIP-441); None when undecided in time."""
    facts = Facts(view, rules)
    enc = encode(view, rules, facts=facts)
    result, _, _ = check_named(list(enc.constraints) + [("balanced", balanced_constraint(enc.var, view, facts))], deadline=Deadline(timeout))
    return None if result == z3.unknown else result == z3.sat


#: Properties the solver's rule of the same name reads only in part: ``fixpoint`` where it pins only
#: the actives also asks the replicas moved to even out all copies, which no Z3 formula says.
_FINER_THAN_THE_SOLVER = frozenset({"fixpoint"})


def catalogue_rules(rules: str) -> tuple:
    """The per-rebalance properties ``rules`` promises that no solver rule reads (or reads as the
    rule set's own reading does not: ``warmup-bound`` under ``ha``; or in part: ``fixpoint``), but
    ``balanced`` and ``stable``.

    >>> [p.name for p in catalogue_rules("learner")], [p.name for p in catalogue_rules("ha")]
    (['standby-count', 'staying-learners'], ['warmup-bound', 'fixpoint', 'caught-up-standby'])
    """
    solver_rules = set(rule_set(rules).rules)
    return tuple(
        p for p in PER_ASSIGNMENT
        if rules in p.promised_by and p.name not in ("balanced", "stable")
        and (p.name not in solver_rules or rules in p.checks_by_rules or p.name in _FINER_THAN_THE_SOLVER)
    )


def conforms(view: RebalanceInput, assignment: Assignment, rules: str = "ha", *, balance: str = "hard", timeout: float | None = 30.0) -> Verdict:
    """Whether ``assignment`` is an answer the protocol allows (property ``conforms:<rules>``).

    Judged by the rule set's :attr:`~rebalproof.solver.rules.RuleSet.judged` rules: the solver's
    own stricter choices (:data:`~rebalproof.solver.rules.OWN_RULES`: no replica of a stateless
    task, nothing new on a leaving member, probing exactly when unbalanced) are readings the
    seeds leave open, and an implementation reading them otherwise is not wrong. Under ``ha``,
    ``probing-rebalance`` is judged as the catalogue's ``balanced`` reads KIP-441: broken only
    when the answer is not balanced, schedules no probing rebalance and a balanced assignment
    exists (inconclusive where the catalogue is).
    The rule set's promises that are no solver rule (:func:`catalogue_rules`: ``staying-learners``
    under ``learner``, ``caught-up-standby`` under ``ha``) are judged by
    the catalogue's own checks, so a differing answer ``replay`` accepts keeps every promise
    ``check`` and ``oracle`` hold an assignor to, but balance (below) and ``stable``
    (requirement 6, a "should": how a run got here is not the recorded answer's to prove).
    ``balance="hard"``: the hard rules only. ``balance="achievable"``: also balanced whenever
    some answer keeping the hard rules is balanced (the same reading as
    :class:`rebalproof.solver.spec.SpecAssignor`); an answer counts as balanced by either reading
    of "within one" with capacities, as the catalogue counts it
    (:func:`~rebalproof.model.balance.balanced_either`). Inconclusive only when that question times out.
    """
    rs = rule_set(rules)
    if balance not in BALANCE_MODES:
        from rebalproof.errors import InputError

        raise InputError(f"unknown balance mode {balance!r}; the modes are {', '.join(BALANCE_MODES)}")
    name = f"conforms:{rs.name}"
    broken = [v for v in violations(view, assignment, rs) if v.rule in rs.judged]
    for prop in catalogue_rules(rs.name):
        verdict = prop.judge(view, assignment, rules=rs.name)
        if verdict.violated and prop.name not in {v.rule for v in broken}:
            broken.append(Violation(prop.name, f"{verdict.message}: {prop.name}", verdict.tasks, verdict.members))
    undecided = None
    if rs.probing:
        # the catalogue's reading (KIP-441 iterative balancing): not balanced is wrong only with
        # no probing rebalance while some balanced assignment exists
        catalogue = ha_balanced(view, assignment)
        if catalogue.violated:
            broken.append(Violation("probing-rebalance", f"{catalogue.message}: probing-rebalance"))
        elif catalogue.status is Status.INCONCLUSIVE:
            undecided = catalogue.message
    if balance == "achievable" and not broken and not balanced_either(view, assignment):
        achievable = balance_achievable(view, rs.name, timeout=timeout)
        if achievable is None:
            return Verdict(property=name, status=Status.INCONCLUSIVE, message="keeps the hard rules; whether a balanced answer exists was not decided in time")
        if achievable:
            return Verdict(property=name, status=Status.VIOLATED, message="not balanced, though an answer keeping the rules is balanced: balance", measure={"broken": ["balance"]})
    if broken:
        return Verdict(
            property=name,
            status=Status.VIOLATED,
            message="; ".join(v.sentence for v in broken),
            tasks=tuple(dict.fromkeys(t for v in broken for t in v.tasks)),
            members=tuple(dict.fromkeys(m for v in broken for m in v.members)),
            measure={"broken": [v.name for v in broken]},
        )
    if undecided is not None:
        return Verdict(property=name, status=Status.INCONCLUSIVE, message=f"keeps the hard rules; {undecided}")
    return Verdict(property=name, status=Status.HOLDS, message=f"the answer keeps every hard rule of {rs.name} ({', '.join(rs.judged)})", measure={"broken": []})
