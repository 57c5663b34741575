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

from rebalproof.model.assignment import Assignment
from rebalproof.model.view import RebalanceInput
from rebalproof.solver.encode import OutOfTime, encode, model_assignment, new_solver, objective_terms
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

    def left(self) -> float | None:
        """Seconds left (None: no limit)."""
        return None if self.end is None else max(0.0, self.end - time.monotonic())

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


def solve_staged(view: RebalanceInput, rules: str, *, timeout: float | None = None, facts: Facts | None = None, objectives: tuple = OBJECTIVES,
                 start: Assignment | None = None, known: tuple[Bound, ...] = (), floors: dict | None = None) -> Optimum:
    """The lexicographic optimum over the full encoding, with a Z3 proof per objective (``objectives``: which, in order).

    ``start``: an answer keeping the rules, the best known before the search (so a timeout still
    answers with it); ``known``: proven bounds of the first objectives, in order, whose values
    ``start`` has: they are fixed, not searched again; ``floors``: objective -> (a lower bound
    proven with ``known`` fixed, its proof), where the search for it starts.
    """
    started = time.monotonic()
    deadline = Deadline(timeout)
    facts = facts or Facts(view, rules)
    try:
        enc = encode(view, rules, facts=facts, deadline=deadline)
        terms = objective_terms(enc, deadline=deadline)
    except OutOfTime:
        return _out_of_time(view, rules, facts, objectives, start, known, floors or {}, started)
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

    if start is not None:
        best, values = start, evaluate(view, start, facts)
        if violations(view, start, rules, facts=facts):
            raise AssertionError("the start of the staged search breaks the rules")
        fixed = [(f"opt:{b.name}", terms[b.name][1] <= b.value) for b in known]
        return _search(view, rules, objectives, base, terms, fixed, list(known), best, values, trusted, deadline, done, floors or {})
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
    return _search(view, rules, objectives, base, terms, [], [], best, values, trusted, deadline, done, {})


def _search(view, rules, objectives, base, terms, fixed, bounds, best, values, trusted, deadline, done, floors):
    """Each objective after ``bounds`` in turn, by bisection between 0 and ``best``'s value."""
    for index, name in enumerate(objectives):
        if index < len(bounds):
            continue
        expr = terms[name][1]
        hi = values.as_dict()[name]
        lo, method, proof = 0, "arithmetic", f"{name} counts something, so it is at least 0"
        if name in floors:
            lo, method, proof = floors.pop(name)
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


def _out_of_time(view, rules, facts, objectives, start, known, floors, started) -> Optimum:
    """The deadline passed while the model was built: ``start`` (or the anytime incumbent) with the bounds known."""
    from rebalproof.solver.incumbent import Incumbent

    answer, source = start, "start"
    if answer is None:
        incumbent = Incumbent(view, facts)
        answer, source = incumbent.answer, incumbent.source
    values = evaluate(view, answer, facts).as_dict() if answer is not None else {}
    bounds = list(known)
    for name in objectives[len(bounds):]:
        lo, method, proof = floors.get(name, (0, "arithmetic" if values else "none", f"{name} is at least 0" if values else ""))
        bounds.append(Bound(name, values.get(name), lo, method, proof))
    reason = "timed out while building the Z3 model" + (f"; the answer is the {source} one" if answer is not None and source != "start" else "")
    return Optimum(status=INCONCLUSIVE, rules=rules, assignment=answer, objectives=tuple(bounds), reason=reason, engine="z3-staged", seconds=time.monotonic() - started)
