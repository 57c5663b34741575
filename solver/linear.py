"""Linear models as data, solved by OR-tools, with lower bounds rebalproof checks by arithmetic.

A :class:`Linear` model is a list of bounded variables and rows ``lo <= sum a_j x_j <= hi``
with integer coefficients, and an objective to minimise. Any solver may be asked for it (GLOP
for the relaxation, SCIP for integers); nothing it says is taken on trust but where a caller
says so. A lower bound comes with *multipliers* ``y`` (one per row), and
:func:`dual_bound` turns any multipliers into a bound by exact arithmetic (LP duality, with the
variables' own bounds absorbing what the multipliers leave over): for every ``x`` within the
bounds that keeps the rows,

    ``c.x = sum_i y_i (a_i.x) + sum_j r_j x_j >= sum_i y_i b_i + sum_j min(r_j l_j, r_j u_j)``

with ``r = c - A^T y`` and ``b_i`` the row's lower bound where ``y_i > 0``, its upper bound
where ``y_i < 0``. Wrong multipliers give a weaker bound, never a false one, so the LP solver's
floating-point duals are rounded to fractions and the bound is recomputed here. When the
objective is a whole number on every integer point, ``ceil`` of the bound bounds the integer
optimum.

Examples
--------
>>> m = Linear()
>>> x, y = m.var(0, 4), m.var(0, 4)
>>> m.row({x: 1, y: 1}, lo=3)
0
>>> m.minimise({x: 2, y: 3})
>>> dual_bound(m, [2])   # 2 * (x + y >= 3) leaves y's cost 1 >= 0: the bound is 6
Fraction(6, 1)
>>> relaxation(m).bound
Fraction(6, 1)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["Linear", "Relaxation", "GrowingRelaxation", "dual_bound", "fixed_bounds", "relaxation", "integer_solution"]


class Linear:
    """Variables (bounds, integrality), rows and a linear objective; built once, read by every solver."""

    def __init__(self):
        self.lower: list[int] = []
        self.upper: list[int] = []
        self.integer: list[bool] = []
        self.rows: list[tuple[dict, int | None, int | None]] = []
        self.objective: dict[int, int] = {}

    def var(self, lo: int, hi: int, *, integer: bool = True) -> int:
        """A new variable within ``[lo, hi]`` (both finite: every bound here needs them); its index."""
        if lo > hi:
            raise ValueError(f"empty variable range [{lo}, {hi}]")
        self.lower.append(lo)
        self.upper.append(hi)
        self.integer.append(integer)
        return len(self.lower) - 1

    def row(self, terms: dict, *, lo: int | None = None, hi: int | None = None) -> int:
        """``lo <= sum terms[j] * x_j <= hi`` (integer coefficients); its index."""
        self.rows.append(({j: a for j, a in terms.items() if a}, lo, hi))
        return len(self.rows) - 1

    def minimise(self, terms: dict) -> None:
        self.objective = {j: c for j, c in terms.items() if c}

    def value(self, x) -> int:
        return sum(c * x[j] for j, c in self.objective.items())

    def keeps(self, x) -> bool:
        """Whether the point ``x`` (integers) keeps every bound and row."""
        if any(not (lo <= v <= hi) for v, lo, hi in zip(x, self.lower, self.upper)):
            return False
        for terms, lo, hi in self.rows:
            s = sum(a * x[j] for j, a in terms.items())
            if (lo is not None and s < lo) or (hi is not None and s > hi):
                return False
        return True


def dual_bound(model: Linear, multipliers) -> Fraction:
    """The lower bound on ``model``'s objective that ``multipliers`` prove (see the module doc), by exact arithmetic.

    A multiplier whose sign asks for a row bound the row does not have counts as 0. Computed in
    integers over the common denominator of the multipliers and the objective (the same exact
    value as with fractions throughout, several times faster: the option bound checks thousands).
    """
    ys = []
    for i, ((_, lo, hi), y) in enumerate(zip(model.rows, multipliers)):
        if y and not ((y > 0 and lo is None) or (y < 0 and hi is None)):
            ys.append((i, y if isinstance(y, (int, Fraction)) else Fraction(y)))
    costs = {j: c if isinstance(c, (int, Fraction)) else Fraction(c) for j, c in model.objective.items()}
    d = math.lcm(1, *{v.denominator for _, v in ys}, *{c.denominator for c in costs.values()})
    reduced = {j: c.numerator * (d // c.denominator) for j, c in costs.items()}  # d * c_j, whole
    total = 0
    for i, y in ys:
        terms, lo, hi = model.rows[i]
        yd = y.numerator * (d // y.denominator)
        total += yd * (lo if y > 0 else hi)
        for j, a in terms.items():
            reduced[j] = reduced.get(j, 0) - yd * a
    for j, r in reduced.items():
        total += min(r * model.lower[j], r * model.upper[j])
    return Fraction(total, d)


def fixed_bounds(model: Linear, multipliers, limit: int) -> tuple[list[int], list[int]]:
    """Variable bounds every point of objective at most ``limit`` keeps, by the multipliers' reduced costs (exact arithmetic).

    Each variable's share of the objective above the bound, ``r_j x_j - min(r_j l_j, r_j u_j)``,
    is at least 0 and they add up to at most ``limit - bound``; so a variable with ``r_j > 0``
    stays within ``l_j + (limit - bound) / r_j`` and one with ``r_j < 0`` above
    ``u_j - (limit - bound) / -r_j`` (rounded inwards for integer variables). Returns
    ``(lower, upper)``, the model's own where nothing is gained.
    """
    reduced = {j: Fraction(c) for j, c in model.objective.items()}
    for (terms, lo, hi), y in zip(model.rows, multipliers):
        y = Fraction(y)
        if y == 0 or (y > 0 and lo is None) or (y < 0 and hi is None):
            continue
        for j, a in terms.items():
            reduced[j] = reduced.get(j, 0) - y * a
    gap = limit - dual_bound(model, multipliers)
    lower, upper = list(model.lower), list(model.upper)
    if gap < 0:
        return lower, upper  # no point is that cheap: the caller learns it from the bound itself
    for j, r in reduced.items():
        if r > 0:
            room = gap / r
            upper[j] = min(upper[j], lower[j] + (math.floor(room) if model.integer[j] else math.ceil(room)))
        elif r < 0:
            room = gap / -r
            lower[j] = max(lower[j], upper[j] - (math.floor(room) if model.integer[j] else math.ceil(room)))
    return lower, upper


@dataclass(frozen=True)
class Relaxation:
    """The LP relaxation's answer: its value (the solver's float), the rounded multipliers and the bound they prove here."""

    value: float
    multipliers: tuple
    bound: Fraction
    point: tuple = ()  # the solver's primal point (floats): a hint, never a proof

    @property
    def integer_bound(self) -> int:
        """``ceil(bound)``: a bound on the integer optimum when the objective is whole at integer points."""
        return math.ceil(self.bound)


def _rational(y: float) -> Fraction:
    return Fraction(round(y * (1 << 24)), 1 << 24)


def relaxation(model: Linear, *, seconds: float | None = None) -> Relaxation | None:
    """The LP relaxation by GLOP (OR-tools), its duals rounded and checked into a bound; None if GLOP did not finish."""
    from ortools.linear_solver import pywraplp

    solver = pywraplp.Solver.CreateSolver("GLOP")
    xs, rows = _load(solver, model, integer=False)
    if seconds is not None:
        solver.SetTimeLimit(max(1, int(seconds * 1000)))
    if solver.Solve() != pywraplp.Solver.OPTIMAL:
        return None
    multipliers = tuple(_rational(r.dual_value()) for r in rows)
    point = tuple(x.solution_value() for x in xs)
    return Relaxation(value=solver.Objective().Value(), multipliers=multipliers, bound=dual_bound(model, multipliers), point=point)


class GrowingRelaxation:
    """:func:`relaxation` of a model that only gains rows between solves, loaded into GLOP once.

    Each :meth:`solve` adds the rows the model gained since the last one and solves again from
    GLOP's last basis; the answer is :func:`relaxation`'s (multipliers rounded, the bound
    recomputed here by :func:`dual_bound` over the whole model as it is now). The variables'
    bounds and the objective must stay as they were when it was built.
    """

    def __init__(self, model: Linear):
        from ortools.linear_solver import pywraplp

        self.model, self.pywraplp = model, pywraplp
        self.solver = pywraplp.Solver.CreateSolver("GLOP")
        self.xs, self.rows = _load(self.solver, model, integer=False)
        self.lower, self.upper, self.objective = list(model.lower), list(model.upper), dict(model.objective)

    def solve(self, *, seconds: float | None = None) -> Relaxation | None:
        model = self.model
        if model.lower != self.lower or model.upper != self.upper or model.objective != self.objective:
            raise ValueError("a growing relaxation's model may gain rows only")
        inf = self.solver.infinity()
        for terms, lo, hi in model.rows[len(self.rows):]:
            row = self.solver.Constraint(-inf if lo is None else lo, inf if hi is None else hi)
            for j, a in terms.items():
                row.SetCoefficient(self.xs[j], float(a))
            self.rows.append(row)
        if seconds is not None:
            self.solver.SetTimeLimit(max(1, int(seconds * 1000)))
        if self.solver.Solve() != self.pywraplp.Solver.OPTIMAL:
            return None
        multipliers = tuple(_rational(r.dual_value()) for r in self.rows)
        point = tuple(x.solution_value() for x in self.xs)
        return Relaxation(value=self.solver.Objective().Value(), multipliers=multipliers, bound=dual_bound(model, multipliers), point=point)


def integer_solution(model: Linear, *, seconds: float, hint=None):
    """An integer point by SCIP (OR-tools, one thread): ``(status, x or None, solver bound)``.

    ``status`` is ``"optimal"`` (SCIP's word that no integer point is cheaper), ``"found"``,
    ``"infeasible"`` (SCIP's word) or ``"unknown"``. The point is checked against every row
    here before it is returned.
    """
    from ortools.linear_solver import pywraplp

    solver = pywraplp.Solver.CreateSolver("SCIP")
    solver.SetNumThreads(1)
    xs, _ = _load(solver, model, integer=True)
    solver.SetTimeLimit(max(1, int(seconds * 1000)))
    if hint is not None:
        solver.SetHint(xs, [float(v) for v in hint])
    status = solver.Solve()
    if status == pywraplp.Solver.INFEASIBLE:
        return "infeasible", None, None
    if status not in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
        return "unknown", None, None
    x = [round(v.solution_value()) for v in xs]
    if not model.keeps(x):
        return "unknown", None, None
    bound = math.ceil(solver.Objective().BestBound() - 1e-6)
    return ("optimal" if status == pywraplp.Solver.OPTIMAL else "found"), x, bound


def _load(solver, model: Linear, *, integer: bool):
    xs = [
        solver.IntVar(lo, hi, "") if integer and whole else solver.NumVar(lo, hi, "")
        for lo, hi, whole in zip(model.lower, model.upper, model.integer)
    ]
    inf = solver.infinity()
    rows = []
    for terms, lo, hi in model.rows:
        row = solver.Constraint(-inf if lo is None else lo, inf if hi is None else hi)
        for j, a in terms.items():
            row.SetCoefficient(xs[j], float(a))
        rows.append(row)
    objective = solver.Objective()
    for j, c in model.objective.items():
        objective.SetCoefficient(xs[j], float(c))  # Fractions from priced objectives (option_bound); bounds are rechecked exactly
    objective.SetMinimization()
    return xs, rows
