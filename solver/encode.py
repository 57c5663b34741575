"""Pure builders from a :class:`RebalanceInput` to named Z3 constraints.

Variables: for every task ``t`` and member ``m`` three Booleans ``a[t,m]`` (active),
``s[t,m]`` (standby), ``w[t,m]`` (warmup), and ``probing`` for the answer's flag. Every hard
rule instance is one constraint with the readable name of
:mod:`rebalproof.solver.rules` (``one-active[0_1]``, ``no-colocation[0_1@I2]``, ...), so that
an unsat core names the rules. Objective terms follow
:mod:`rebalproof.solver.objectives`. Nothing here holds a solver: callers make a fresh one
per check (see ``SOLVER-NOTES.md``: incremental push/pop returned bad models).

Examples
--------
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="0_1"),), members=(Member(id="I2"), Member(id="I3")))
>>> enc = encode(view, "ha")
>>> [name for name, _ in enc.constraints][:3]
['one-active[0_1]', 'no-colocation[0_1@I2]', 'no-colocation[0_1@I3]']
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

from rebalproof.model.assignment import ROLES, Assignment
from rebalproof.model.names import id_key, subtopology_of
from rebalproof.model.ranking import is_caught_up
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.handover import handover_owners
from rebalproof.properties.lag import acceptable_active_holders
from rebalproof.solver.rules import Facts, RuleSet, rule_set

__all__ = ["Encoding", "encode", "given", "balance_bound", "balanced_constraint", "objective_terms", "decode", "new_solver", "model_assignment"]


@dataclass(frozen=True)
class Encoding:
    """Variables and named hard-rule constraints of one view under one rule set."""

    view: RebalanceInput
    facts: Facts
    var: dict  # (role, task, member) -> z3.BoolRef
    probing: z3.BoolRef
    constraints: tuple  # ((name, z3.BoolRef), ...)

    def role(self, role: str, task_id: str, member_id: str) -> z3.BoolRef:
        return self.var[(role, task_id, member_id)]


def _count(bools) -> z3.ArithRef:
    bools = list(bools)
    return z3.Sum([z3.If(b, 1, 0) for b in bools]) if bools else z3.IntVal(0)


def balance_bound(counts: dict[str, z3.ArithRef], caps: dict[str, int], bound, tag: str) -> list:
    """``imbalance(counts) <= bound`` as linear constraints: some level ``lam`` with ``lam*c - bound <= n <= lam*c``."""
    if len(counts) < 2:
        return []
    lam = z3.Real(f"lam[{tag}]")
    out = []
    for m, n in counts.items():
        out.append(n <= lam * caps[m])
        out.append(n + bound >= lam * caps[m])
    return out


def _within_one(counts: dict[str, z3.ArithRef], caps: dict[str, int]) -> z3.BoolRef:
    terms = [counts[i] * caps[j] <= (counts[j] + 1) * caps[i] for i in counts for j in counts if i != j]
    return z3.And(terms) if terms else z3.BoolVal(True)


class OutOfTime(Exception):
    """The deadline passed while a model was being built (large inputs take seconds to encode)."""


def _tick(deadline) -> None:
    if deadline is not None and deadline.passed:
        raise OutOfTime()


def encode(view: RebalanceInput, rules: str | RuleSet, *, facts: Facts | None = None, deadline=None) -> Encoding:
    """Every hard rule of ``rules`` over ``view`` as named constraints (see the module doc).

    ``deadline`` (a :class:`~rebalproof.solver.staged.Deadline`): :class:`OutOfTime` once it passes.
    """
    facts = facts or Facts(view, rules)
    rs = rule_set(rules)
    var = {(r, t, m): z3.Bool(f"{r}[{t}@{m}]") for t in view.task_ids for m in view.member_ids for r in ROLES}
    probing = z3.Bool("probing_rebalance")
    cons: list = []
    a = lambda t, m: var[("active", t, m)]  # noqa: E731
    s = lambda t, m: var[("standby", t, m)]  # noqa: E731
    w = lambda t, m: var[("warmup", t, m)]  # noqa: E731
    members = view.member_ids
    for t in view.task_ids:
        _tick(deadline)
        cons.append((f"one-active[{t}]", z3.PbEq([(a(t, m), 1) for m in members], 1)))
        for m in members:
            cons.append((f"no-colocation[{t}@{m}]", z3.AtMost(a(t, m), s(t, m), w(t, m), 1)))
    for task in view.tasks:
        t = task.id
        if not task.stateful:
            cons.append((f"stateless-replica[{t}]", z3.Not(z3.Or([z3.Or(s(t, m), w(t, m)) for m in members] or [z3.BoolVal(False)]))))
        elif facts.required:
            # a standby is a replica by count, labelled standby or warmup (the label decides
            # nothing: rules.violations and properties.copies count both), not beside its active
            replicas = [z3.And(z3.Or(s(t, m), w(t, m)), z3.Not(a(t, m))) for m in members]
            cons.append((f"standby-count[{t}]", z3.AtLeast(*replicas, facts.required)))
    if rs.warmup_bound:
        extras = []
        for t in view.stateful_task_ids:
            copies = _count(z3.Or(a(t, m), s(t, m), w(t, m)) for m in members)
            extras.append(z3.If(copies - 1 - facts.allowance > 0, copies - 1 - facts.allowance, 0))
        cons.append(("warmup-bound", _sum(extras) <= view.config.max_warmup_replicas))
    if rs.caught_up_active:
        for t in view.stateful_task_ids:
            ok = set(acceptable_active_holders(view, t))
            for m in members:
                if m not in ok:
                    cons.append((f"caught-up-active[{t}@{m}]", z3.Not(a(t, m))))
    for t in view.task_ids:
        for m in members:
            if not facts.may_hold(t, m):
                cons.append((f"leaving[{t}@{m}]", z3.Not(z3.Or(a(t, m), s(t, m), w(t, m)))))
    if rs.handover:
        for t in view.stateful_task_ids:
            kept, refused = handover_owners(view, t)
            for m in refused if kept else ():
                cons.append((f"learner-handover[{t}@{m}]", z3.Implies(a(t, m), z3.Or([a(t, k) for k in kept]))))
    lost = []
    for t, (owners, learners) in facts.kept_learners.items():
        kept = z3.Or([z3.Or(a(t, m), s(t, m), w(t, m)) for m in learners])
        lost.append((t, z3.And(z3.Or([a(t, o) for o in owners]), z3.Not(kept))))
    if facts.learner_drops == 0:
        cons.extend((f"learners-kept[{t}]", z3.Not(dropped)) for t, dropped in lost)
    elif lost:
        cons.append(("learners-kept", _count(dropped for _, dropped in lost) <= facts.learner_drops))
        cons.extend((f"learners-all-kept[{t}]", z3.Not(dropped)) for t, dropped in lost)
    for rule, _, among in facts.hosts_among:
        for t, hosts in among.items():
            cons.append((f"{rule}[{t}]", z3.Or([a(t, m) for m in hosts])))
    if rs.stateless_leave:
        for t in view.stateless_task_ids:
            for m in sorted(facts.treat_leaving, key=id_key):
                cons.append((f"stateless-at-once[{t}@{m}]", z3.Not(a(t, m))))
    current = facts.fixpoint_current
    if current is not None:
        cons.append(("fixpoint", z3.And(_same_copies(var, view, current, actives_only=not facts.fixpoint_pins_copies))))
    if rs.probing:
        cons.append(("probing-rebalance", probing == z3.Not(balanced_constraint(var, view, facts))))
    return Encoding(view=view, facts=facts, var=var, probing=probing, constraints=tuple(cons))


def _sum(terms):
    return z3.Sum(terms) if terms else z3.IntVal(0)


def _active_counts(var, view, facts, tasks=None) -> dict:
    tasks = view.task_ids if tasks is None else tasks
    return {m: _count(var[("active", t, m)] for t in tasks) for m in facts.staying}


def balanced_constraint(var, view, facts) -> z3.BoolRef:
    """KIP-441 balance of the actives (:func:`~rebalproof.model.balance.is_balanced`) as a formula."""
    caps = {m: view.member(m).capacity for m in facts.staying}
    parts = [_within_one(_active_counts(var, view, facts), caps)]
    for sub, tasks in _subtopologies(view).items():
        parts.append(_within_one(_active_counts(var, view, facts, tasks), caps))
    return z3.And(parts)


def _subtopologies(view: RebalanceInput) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for t in view.task_ids:
        out.setdefault(subtopology_of(t), []).append(t)
    return out


def _same_copies(var, view, assignment: Assignment, *, actives_only: bool = False) -> list:
    """The copies of ``assignment`` exactly, a replica labelled standby or warmup alike
    (:func:`rebalproof.properties.stability.same_copies`: the label decides nothing), as the
    plain checker reads ``fixpoint``: each member active on what it is active on there, and
    holding a replica of what it holds a replica of there (members it does not name hold nothing);
    with ``actives_only`` the actives alone (:func:`~rebalproof.properties.stability.same_actives`)."""
    out = []
    for t in view.task_ids:
        for m in view.member_ids:
            held = assignment.of(m)
            active, replica = var[("active", t, m)], z3.Or(var[("standby", t, m)], var[("warmup", t, m)])
            out.append(active if t in held.active else z3.Not(active))
            if not actives_only:
                out.append(replica if (t in held.standby or t in held.warmup) else z3.Not(replica))
    return out


def given(enc: Encoding, assignment: Assignment) -> list:
    """``assignment`` as named constraints, one per copy and per absent copy, plus its probing flag.

    Names read ``given: 0_1 active on I2`` / ``given: 0_1 not standby on I3`` /
    ``given: probing_rebalance=false``, so an unsat core can be said in words.
    """
    out = []
    for (role, t, m), v in enc.var.items():
        if t in getattr(assignment.of(m), role):
            out.append((f"given: {t} {role} on {m}", v))
        else:
            out.append((f"given: {t} not {role} on {m}", z3.Not(v)))
    out.append((f"given: probing_rebalance={'true' if assignment.probing_rebalance else 'false'}", enc.probing if assignment.probing_rebalance else z3.Not(enc.probing)))
    return out


def objective_terms(enc: Encoding, *, deadline=None) -> dict:
    """Objective name -> (constraints making it exact, expression), per :mod:`rebalproof.solver.objectives`.

    ``imbalance`` and ``spread`` are integer variables tied by :func:`balance_bound` (they are
    upper bounds of the true measures, equal to them at any optimum of a bound on them).
    ``deadline``: :class:`OutOfTime` once it passes.
    """
    view, facts, var = enc.view, enc.facts, enc.var
    caps = {m: view.member(m).capacity for m in facts.staying}
    members = view.member_ids
    k = z3.Int("imbalance")
    inst = [k >= 0] + balance_bound(_active_counts(var, view, facts), caps, k, "all")
    ks, sub_cons = [], []
    for sub, tasks in _subtopologies(view).items():
        _tick(deadline)
        ksub = z3.Int(f"spread[{sub}]")
        ks.append(ksub)
        sub_cons += [ksub >= 0] + balance_bound(_active_counts(var, view, facts, tasks), caps, ksub, sub)
    moves = _count(z3.Not(var[("active", t, o)]) for t, o in facts.owner.items())
    restore_terms, warm = [], []
    for t in view.stateful_task_ids:
        _tick(deadline)
        for m in members:
            if not is_caught_up(view, m, t):
                restore_terms.append(z3.Or(var[("active", t, m)], var[("standby", t, m)], var[("warmup", t, m)]))
        copies = _count(z3.Or(var[("active", t, m)], var[("standby", t, m)], var[("warmup", t, m)]) for m in members)
        warm.append(z3.If(copies - 1 - facts.required > 0, copies - 1 - facts.required, 0))
    return {
        "imbalance": (inst, k),
        "spread": (sub_cons, _sum(ks)),
        "moves": ([], moves),
        "restore": ([], _count(restore_terms)),
        "warmups": ([], _sum(warm)),
    }


def new_solver(*, timeout_ms: int | None = None, seed: int = 0) -> z3.Solver:
    """A fresh solver with the settings SOLVER-NOTES found necessary (cardinality solver on)."""
    z3.set_param("sat.cardinality.solver", True)  # a process-wide Z3 setting, idempotent
    solver = z3.Solver()
    solver.set("random_seed", seed)
    if timeout_ms is not None:
        solver.set("timeout", max(1, int(timeout_ms)))
    return solver


def model_assignment(enc: Encoding, model: z3.ModelRef) -> Assignment:
    """The :class:`Assignment` a model describes."""
    return decode(enc, lambda v: z3.is_true(model.eval(v, model_completion=True)))


def decode(enc: Encoding, value) -> Assignment:
    """An :class:`Assignment` from ``value(bool_var) -> bool``."""
    roles = {m: {r: [] for r in ROLES} for m in enc.view.member_ids}
    for (role, t, m), v in enc.var.items():
        if value(v):
            roles[m][role].append(t)
    return Assignment.build(roles, probing_rebalance=bool(value(enc.probing)))
