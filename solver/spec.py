"""Checking the specification: every answer the rules allow, as a nondeterministic assignor.

For small inputs, :func:`enumerate_allowed` lists every assignment a rule set allows, by
blocking clauses over Z3 models, capped at ``limit`` (the result says whether it is complete).
:class:`SpecAssignor` exposes the set as ``choices(view)`` so the explorer can check the
specification itself (``--assignor spec:ha``).

What "the rules allow" means (the choices made here):

- **hard rules**: those of :mod:`rebalproof.solver.rules` for the rule set, including
  ``fixpoint`` (a valid, balanced, caught-up current assignment is the only answer; where its
  copies, standbys counted, are not within one by every reading, its actives are pinned and its
  replicas may move) and
  ``leaving``; and the rule set's promises that are no solver rule
  (:func:`~rebalproof.solver.oracle.catalogue_rules`: ``caught-up-standby`` under ``ha``,
  ``staying-learners`` under ``learner``, and ``fixpoint``'s replica moves where only the
  actives are pinned), by the catalogue's own checks on each answer Z3 lists. Filtering after the search cannot lose a balanced answer: moving a new standby that
  must restore onto an idle caught-up member changes no active, and ``leaving`` is stricter
  than ``staying-learners``;
- **balance** (``balance=``): ``"achievable"`` (default) also requires KIP-441 balance
  (:func:`~rebalproof.model.balance.is_balanced`) whenever some answer keeping the hard rules
  is balanced -- KIP-441 "creates as balanced an assignment as possible" while actives stay
  caught up; when none is balanced, every hard-rule answer is allowed (the warmups of each are
  the implementation's plan). ``"hard"``: the hard rules only. Movement, restore cost and
  stickiness (``stable``: requirement 6's stateless tasks, and the sticky and eager rules'
  needless exchanges of stateful actives) are left to the implementation, so ``check
  --assignor spec:sticky`` may find ``stable`` violated, as it may find ``converges``;
- **probing_rebalance** is not a choice: under ``ha`` it is asked for exactly when the answer
  is not balanced (the ``probing-rebalance`` rule); the other rule sets leave the flag free
  (outside ``fixpoint``) and each listed answer says false;
- **roles**: answers that differ only in which non-active copies are called standby or
  warmup are one answer: the ``r`` best-ranked non-active copies (rank, then id) are the
  standbys, the rest warmups. Because of that id tie-break the assignor does not declare
  itself equivariant.

Examples
--------
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="0_0", stateful=False),), members=(Member(id="I1"), Member(id="I2")))
>>> [a.of("I1").active for a in SpecAssignor("sticky").choices(view)]
[(), ('0_0',)]
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

from rebalproof.errors import InputError, RebalproofError
from rebalproof.model.assignment import ROLES, Assignment
from rebalproof.model.balance import is_balanced
from rebalproof.model.names import id_key
from rebalproof.model.ranking import rank
from rebalproof.model.view import RebalanceInput
from rebalproof.solver.encode import balanced_constraint, encode, new_solver
from rebalproof.solver.oracle import BALANCE_MODES, catalogue_rules
from rebalproof.solver.rules import RULE_SETS, Facts, rule_set, violations
from rebalproof.solver.staged import Deadline

__all__ = ["Enumeration", "enumerate_allowed", "SpecAssignor", "SpecTooLarge", "SPEC_NAMES", "resolve_spec"]

SPEC_NAMES = tuple(f"spec:{name}" for name in RULE_SETS)
"""The assignor names this module answers to: ``spec:ha``, ``spec:sticky``, ..."""


class SpecTooLarge(RebalproofError):
    """More answers are allowed than the cap: the check over them would be incomplete."""


@dataclass(frozen=True)
class Enumeration:
    """Answers a rule set allows: ``complete`` when these are all of them.

    ``status``: ``complete``, ``capped`` (``limit`` reached, more exist) or ``timeout``.
    """

    rules: str
    balance: str
    assignments: tuple[Assignment, ...]
    status: str
    limit: int

    @property
    def complete(self) -> bool:
        return self.status == "complete"


def _canonical(view: RebalanceInput, facts: Facts, active: dict, copies: dict) -> Assignment:
    roles = {m: {r: [] for r in ROLES} for m in view.member_ids}
    for t in view.task_ids:
        roles[active[t]]["active"].append(t)
        others = sorted((m for m in copies[t] if m != active[t]), key=lambda m: (rank(view, m, t), id_key(m)))
        for i, m in enumerate(others):
            roles[m]["standby" if i < facts.required else "warmup"].append(t)
    answer = Assignment.build(roles)
    if facts.rules.probing and not is_balanced(view, answer):
        answer = Assignment.build(roles, probing_rebalance=True)
    return answer


def enumerate_allowed(view: RebalanceInput, rules: str = "ha", *, balance: str = "achievable", limit: int = 1000, timeout: float | None = 60.0) -> Enumeration:
    """Every answer ``rules`` allows on ``view`` (see the module doc), up to ``limit``, in a fixed order."""
    rs = rule_set(rules)
    if balance not in BALANCE_MODES:
        raise InputError(f"unknown balance mode {balance!r}; the modes are {', '.join(BALANCE_MODES)}")
    if limit < 1:
        raise InputError(f"limit must be at least 1, got {limit}")
    facts = Facts(view, rs)
    if facts.fixpoint_current is not None and facts.fixpoint_pins_copies:
        return Enumeration(rules=rs.name, balance=balance, assignments=(facts.fixpoint_current,), status="complete", limit=limit)
    enc = encode(view, rs, facts=facts)
    deadline = Deadline(timeout)
    solver = new_solver(timeout_ms=deadline.ms())
    for _, c in enc.constraints:
        solver.add(c)
    if balance == "achievable":
        probe = new_solver(timeout_ms=deadline.ms())
        probe.add([c for _, c in enc.constraints] + [balanced_constraint(enc.var, view, facts)])
        answer = probe.check()
        if answer == z3.unknown:
            return Enumeration(rules=rs.name, balance=balance, assignments=(), status="timeout", limit=limit)
        if answer == z3.sat:
            solver.add(balanced_constraint(enc.var, view, facts))
    act = {(t, m): enc.var[("active", t, m)] for t in view.task_ids for m in view.member_ids}
    held = {(t, m): z3.Or([enc.var[(r, t, m)] for r in ROLES]) for t in view.task_ids for m in view.member_ids}
    found: list[Assignment] = []
    promised = catalogue_rules(rs.name)
    seen = set()
    status = "complete"
    while True:
        ms = deadline.ms()
        if ms == 0:
            status = "timeout"
            break
        if ms is not None:
            solver.set("timeout", max(1, ms))
        result = solver.check()
        if result == z3.unsat:
            break
        if result != z3.sat:
            status = "timeout"
            break
        if len(found) >= limit:
            status = "capped"
            break
        model = solver.model()
        is_true = lambda v: z3.is_true(model.eval(v, model_completion=True))  # noqa: E731
        active = {t: m for (t, m), v in act.items() if is_true(v)}
        copies = {t: [m for m in view.member_ids if is_true(held[(t, m)])] for t in view.task_ids}
        answer = _canonical(view, facts, active, copies)
        broken = violations(view, answer, rs, facts=facts)
        key = tuple(sorted((t, m, m == active[t]) for t in view.task_ids for m in copies[t]))
        if broken or key in seen:  # re-verified: a model that breaks a rule is never returned
            raise AssertionError(f"Z3 model not trusted: {broken[0].name if broken else 'repeated'}")
        seen.add(key)
        if not any(p.judge(view, answer, rules=rs.name).violated for p in promised):
            found.append(answer)
        solver.add(z3.Or([z3.Not(v) if is_true(v) else v for v in list(act.values()) + list(held.values())]))
    order = sorted(found, key=lambda a: [(m, x.active, x.standby, x.warmup) for m, x in a.members])
    return Enumeration(rules=rs.name, balance=balance, assignments=tuple(order), status=status, limit=limit)


class SpecAssignor:
    """The nondeterministic assignor "whatever the rules allow": ``choices(view)`` lists every answer.

    Parameters
    ----------
    rules : str
        Rule set (``ha``, ``sticky``, ``eager``, ``learner``).
    balance : str
        ``"achievable"`` or ``"hard"`` (module doc).
    limit : int
        Most answers per view; more raise :class:`SpecTooLarge` (an exploration over a cut
        set would be unsound, so it is never silently truncated).
    timeout : float
        Seconds per view.
    """

    equivariant = False

    def __init__(self, rules: str = "ha", *, balance: str = "achievable", limit: int = 1000, timeout: float | None = 60.0):
        self.rules = rule_set(rules).name
        if balance not in BALANCE_MODES:
            raise InputError(f"unknown balance mode {balance!r}; the modes are {', '.join(BALANCE_MODES)}")
        self.balance, self.limit, self.timeout = balance, limit, timeout
        self.name = f"spec:{self.rules}"

    def choices(self, view: RebalanceInput) -> tuple[Assignment, ...]:
        """Every allowed answer (empty when none keeps the rules); :class:`SpecTooLarge` past the cap or timeout."""
        result = enumerate_allowed(view, self.rules, balance=self.balance, limit=self.limit, timeout=self.timeout)
        if result.status == "capped":
            raise SpecTooLarge(f"{self.name} allows more than {self.limit} answers for this view; raise limit= or shrink the scenario")
        if result.status == "timeout":
            raise SpecTooLarge(f"{self.name} could not list the allowed answers within {self.timeout} s; raise timeout= or shrink the scenario")
        return result.assignments

    def __call__(self, view: RebalanceInput) -> Assignment:
        """The first allowed answer in the fixed order (a deterministic representative)."""
        options = self.choices(view)
        if not options:
            raise InputError(f"{self.name}: no assignment keeps the rules for this view")
        return options[0]

    def __repr__(self) -> str:
        return f"SpecAssignor({self.rules!r}, balance={self.balance!r}, limit={self.limit})"


def resolve_spec(text: str) -> SpecAssignor:
    """``spec:ha`` or ``spec:ha:balance=hard,limit=200`` -> :class:`SpecAssignor`; :class:`InputError` otherwise."""
    if not text.startswith("spec:"):
        raise InputError(f"not a spec assignor: {text!r}; give one of {', '.join(SPEC_NAMES)}")
    rules, _, options = text[len("spec:"):].partition(":")
    if rules not in RULE_SETS:
        raise InputError(f"unknown spec assignor {text!r}; give one of {', '.join(SPEC_NAMES)}")
    kwargs: dict = {}
    for part in filter(None, options.split(",")):
        key, sep, value = part.partition("=")
        if not sep or key not in ("balance", "limit", "timeout"):
            raise InputError(f"spec assignor option {part!r} is not one of balance=hard|achievable, limit=N, timeout=S")
        try:
            kwargs[key] = int(value) if key == "limit" else float(value) if key == "timeout" else value
        except ValueError:
            raise InputError(f"spec assignor option {key} needs a number, got {value!r}") from None
    return SpecAssignor(rules, **kwargs)
