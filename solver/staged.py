"""Staged lexicographic optimisation with Z3 over the full encoding (every task, member, role).

The reference engine: slow beyond small inputs, but it states the whole problem at once, so
the faster structural engine (:mod:`rebalproof.solver.placement`) is tested against it.

For each objective in order: binary search between the proven lower bound and the best value
found, each step a *fresh* solver (SOLVER-NOTES: push/pop returned bad models) asked whether
``objective <= mid`` together with the hard rules and the earlier objectives at their optima.
Every model is decoded and re-verified in plain Python (:func:`rebalproof.solver.rules.violations`,
:func:`rebalproof.solver.objectives.evaluate`) before it is trusted; ``unknown`` (a timeout)
is never read as a proof.
"""

from __future__ import annotations

import time

import z3

from rebalproof.model.view import RebalanceInput
from rebalproof.solver.encode import encode, model_assignment, new_solver, objective_terms
from rebalproof.solver.objectives import OBJECTIVES, evaluate
from rebalproof.solver.result import INCONCLUSIVE, INFEASIBLE, OPTIMAL, Bound, Optimum
from rebalproof.solver.rules import Facts, violations

__all__ = ["solve_staged", "Deadline", "check_named"]


class Deadline:
    """Seconds left until a fixed moment (None: no limit)."""

    def __init__(self, timeout: float | None):
        self.end = None if timeout is None else time.monotonic() + timeout

    def ms(self) -> int | None:
        if self.end is None:
            return None
        return max(0, int((self.end - time.monotonic()) * 1000))

    @property
    def passed(self) -> bool:
        return self.end is not None and time.monotonic() >= self.end


def check_named(named, *, deadline: Deadline, track: bool = False, seed: int = 0):
    """Check ``named`` ((name, constraint) pairs) on a fresh solver: (result, model or None, core names)."""
    ms = deadline.ms()
    if ms == 0:
        return z3.unknown, None, ()
    solver = new_solver(timeout_ms=ms, seed=seed)
    if track:
        solver.set("unsat_core", True)
        solver.set("core.minimize", True)
        for i, (name, expr) in enumerate(named):
            solver.assert_and_track(expr, z3.Bool(f"{name}#{i}"))
    else:
        for _, expr in named:
            solver.add(expr)
    result = solver.check()
    if result == z3.sat:
        return result, solver.model(), ()
    if result == z3.unsat and track:
        return result, None, tuple(str(c).rsplit("#", 1)[0] for c in solver.unsat_core())
    return result, None, ()


def solve_staged(view: RebalanceInput, rules: str, *, timeout: float | None = None, facts: Facts | None = None, objectives: tuple = OBJECTIVES) -> Optimum:
    """The lexicographic optimum over the full encoding, with a Z3 proof per objective (``objectives``: which, in order)."""
    started = time.monotonic()
    deadline = Deadline(timeout)
    facts = facts or Facts(view, rules)
    enc = encode(view, rules, facts=facts)
    terms = objective_terms(enc)
    base = list(enc.constraints)
    for name in objectives:
        base += [(f"def:{name}", c) for c in terms[name][0]]

    def done(status, assignment, bounds, reason=""):
        return Optimum(status=status, rules=rules, assignment=assignment, objectives=tuple(bounds), reason=reason, engine="z3-staged", seconds=time.monotonic() - started)

    def trusted(model):
        answer = model_assignment(enc, model)
        broken = violations(view, answer, rules, facts=facts)
        if broken:
            raise AssertionError(f"Z3 returned a model that breaks {broken[0].name}; not trusted")
        return answer, evaluate(view, answer, facts)

    result, model, core = check_named(enc.constraints, deadline=deadline, track=True)
    if result == z3.unsat:
        return done(INFEASIBLE, None, [Bound(n, None, 0, "none", "") for n in objectives], "no assignment keeps the rules: " + ", ".join(sorted(set(core))))
    if result != z3.sat:
        from rebalproof.solver.incumbent import Incumbent

        start = Incumbent(view, facts)
        values = evaluate(view, start.answer, facts).as_dict() if start.answer is not None else {}
        return done(INCONCLUSIVE, start.answer, [Bound(n, values.get(n), 0, "arithmetic" if values else "none", f"{n} is at least 0" if values else "") for n in objectives],
                    "timed out before Z3 found an assignment" + (f"; the answer is the {start.source} one" if start.answer is not None else ""))
    best, values = trusted(model)
    fixed: list = []
    bounds: list[Bound] = []
    for index, name in enumerate(objectives):
        expr = terms[name][1]
        hi = values.as_dict()[name]
        lo, method, proof = 0, "arithmetic", f"{name} counts something, so it is at least 0"
        while lo < hi:
            mid = (lo + hi) // 2
            result, model, _ = check_named(base + fixed + [(f"try:{name}", expr <= mid)], deadline=deadline)
            if result == z3.sat:
                best, values = trusted(model)
                hi = values.as_dict()[name]
            elif result == z3.unsat:
                lo = mid + 1
                method = "z3-unsat"
                earlier = ", ".join(f"{b.name} = {b.value}" for b in bounds)
                proof = f"{name} <= {mid} is unsatisfiable under the hard rules" + (f" with {earlier}" if earlier else "")
            else:
                bounds.append(Bound(name, hi, lo, method, proof))
                current = values.as_dict()
                bounds += [Bound(n, current[n], 0, "none", "not reached before the timeout") for n in objectives[index + 1 :]]
                return done(INCONCLUSIVE, best, bounds, f"timed out while minimising {name}")
        bounds.append(Bound(name, hi, lo, method, proof))
        fixed.append((f"opt:{name}", expr <= hi))
    return done(OPTIMAL, best, bounds)
