"""A tighter bound on moves and restore at a given spread: each subtopology's least cost per option, then the best mix.

The cost stage's LP (:class:`rebalproof.solver.choice.ChoiceModel` with ``spread_at_most``)
lets a subtopology take a fraction of several (level, width) options, so it spreads the spread
budget over many subtopologies and bounds the moves well below the optimum. Here each option is
taken whole:

- the cost ``W*moves + cold actives`` is a sum over subtopologies (every count and kept
  variable of the model belongs to one class, of one subtopology), and a layout of spread at
  most ``U`` picks one option ``(p, K)`` per subtopology with the ``K`` adding up to at most ``U``;
- the instance's rows (each staying member's count of all tasks within the instance option's box
  ``[lo_m, hi_m]``) are the only rows joining subtopologies besides the spread's; they are moved
  into the cost with prices ``nu_m >= 0`` (for ``count_m >= lo_m``) and ``mu_m <= 0`` (for
  ``count_m <= hi_m``): ``cost >= cost - a.count + sum_m (nu_m lo_m + mu_m hi_m)`` with
  ``a = nu + mu``, at every layout, whatever the prices (a Lagrangian bound). The prices are the
  whole model's LP multipliers on those rows, rounded to fractions, so the bound is at least
  about that LP's and usually higher;
- the priced cost is a sum over subtopologies, so for each subtopology ``s`` and option ``o`` the
  least priced cost of ``s``'s own classes with every member's count within ``o``'s box,
  ``c(s, o)``, bounds what that subtopology adds in any layout choosing ``o`` (the other
  subtopologies are left out: fewer rows, a lower least); ``c(s, o)`` is bounded below by its LP
  relaxation's multipliers, checked by exact arithmetic
  (:func:`rebalproof.solver.linear.dual_bound`); where the LP solver gives no answer, the
  variables' own bounds do;
- the least of ``sum_s c(s, o_s)`` over the choices with ``sum_s K(o_s) <= U`` is a
  multiple-choice knapsack over small whole widths, solved exactly by dynamic programming over
  the width above the subtopologies' leasts.

A few subgradient steps (Polyak's, towards the cost of a layout found) then move the prices;
every step's bound is a true bound on its own, the best is kept. The constant
``sum_m (nu_m lo_m + mu_m hi_m)`` is taken at its least over the instance's
options. Options the spread LP's reduced costs rule out (upper bound 0 in the cost model) are skipped,
and the count and kept variables keep the cost model's narrowed bounds: every layout of spread at
most ``U`` keeps them (:func:`rebalproof.solver.linear.fixed_bounds`). The result is a lower
bound on the cost of every layout of least imbalance and spread at most ``U``; its ceiling too,
as the cost is whole.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass
from fractions import Fraction

from rebalproof.solver.linear import GrowingRelaxation, Linear, _load, dual_bound, relaxation
from rebalproof.solver.linear import _rational as linear_rational

__all__ = ["OptionBound", "Tightened", "option_bound", "least_mix", "add_option_rows", "tighten", "whole_rows"]


@dataclass(frozen=True)
class OptionBound:
    """The bound and how it was reached: per subtopology the least cost per width, and the LPs solved."""

    bound: Fraction
    priced: bool  # whether the instance's rows were priced (else the prices are 0)
    price: dict  # member -> a_m, the price of a task counted there in this bound
    per_width: dict  # subtopology -> {K: least bound over the options of width K}
    per_option: dict  # subtopology -> {option index: its bound} (options with a point)
    fixed: Fraction  # the bound on the classes of no subtopology group
    solved: int
    unsolved: int  # options bounded by the variables' own bounds (the LP solver gave no answer)
    mix: tuple = ()  # ((group, (p, K)), ...): the options of the least mix, the instance's (``(all)``) of the least constant (a hint for layouts)

    @property
    def integer_bound(self) -> int:
        return math.ceil(self.bound)


def least_mix(per_width: dict, budget: int) -> Fraction | None:
    """``min sum_s cost_s(K_s)`` over ``sum_s K_s <= budget`` (``per_width``: subtopology -> {K: cost}); None when no choice fits.

    Exact dynamic programming over the total width (whole numbers, at most ``budget``).

    >>> least_mix({"a": {0: 5, 1: 2}, "b": {0: 4, 1: 1}}, 1)
    Fraction(6, 1)
    >>> least_mix({"a": {2: 1}}, 1) is None
    True
    """
    best: dict[int, Fraction] = {0: Fraction(0)}
    for s in sorted(per_width):
        nxt: dict[int, Fraction] = {}
        for used, total in best.items():
            for k, c in per_width[s].items():
                if used + k <= budget and (used + k not in nxt or total + c < nxt[used + k]):
                    nxt[used + k] = total + c
        if not nxt:
            return None
        best = nxt
    return min(best.values())


def _own_bound(model: Linear, *, seconds: float | None) -> tuple[Fraction, bool, tuple]:
    """A checked lower bound on ``model``'s least: its LP's multipliers, else the variables' own bounds; and the LP's point (a hint)."""
    lp = relaxation(model, seconds=seconds)
    if lp is not None:
        return lp.bound, True, lp.point
    return dual_bound(model, [0] * len(model.rows)), False, ()


def _sub_model(costed, keys: list, box: dict | None, price: dict):
    """The priced cost of the classes ``keys`` (one subtopology's), every staying member's count within ``box``: ``(Linear, counted)``.

    ``price``: member -> ``a_m``, taken off the cost of each task counted on that member;
    ``counted``: the variable index -> its host. None when the box cannot hold the classes' tasks
    by counting alone (no point at all).
    """
    big, prob = costed.model, costed.prob
    m = Linear()
    at: dict = {}
    cost: dict = {}
    w = prob.weight
    for key in keys:
        cls = prob.classes[key]
        for h in cls.hosts:
            j = costed.x[(key, h)]
            at[(key, h)] = m.var(big.lower[j], big.upper[j])
            cost[at[(key, h)]] = (w if cls.owned else 0) + (1 if h in cls.cold else 0) - price.get(h, 0)
        m.row({at[(key, h)]: 1 for h in cls.hosts}, lo=len(cls.tasks), hi=len(cls.tasks))
        for o in cls.owners:
            j = costed.kept[(key, o)]
            k = m.var(big.lower[j], big.upper[j])
            m.row({k: 1, at[(key, o)]: -1}, hi=0)
            cost[k] = -w
    if box is not None:
        total = sum(len(prob.classes[key].tasks) for key in keys)
        room = {}  # per host, the most tasks of ``keys`` it may take (variable bounds, and the box on staying members)
        for (key, h), j in at.items():
            room[h] = room.get(h, 0) + m.upper[j]
        if sum(lo for lo, _ in box.values()) > total or sum(min(r, box[h][1]) if h in box else r for h, r in room.items()) < total:
            return None  # the box asks for more tasks than there are, or holds fewer: no point (arithmetic)
        for member, (lo, hi) in box.items():
            count = {at[(key, member)]: 1 for key in keys if (key, member) in at}
            if count:
                m.row(count, lo=lo, hi=hi)
            elif lo > 0:
                return None
    m.minimise(cost)
    return m, {j: h for (_, h), j in at.items()}


class _SubLP:
    """One subtopology's priced cost (:func:`_sub_model`) with a row per staying member's count, loaded into GLOP once.

    Each option changes only those rows' bounds, so the model is built once per subtopology and
    round, and GLOP solves again from its last basis; each option's bound is checked, as
    :func:`_own_bound`'s, against a model whose rows carry that option's box
    (:func:`rebalproof.solver.linear.dual_bound`). :meth:`bound` answers what
    ``_own_bound(_sub_model(costed, keys, box, price))`` answers (None where that is None).
    """

    def __init__(self, costed, keys: list, price: dict):
        from ortools.linear_solver import pywraplp

        self.model, self.counted = _sub_model(costed, keys, None, price)
        self.total = sum(len(costed.prob.classes[key].tasks) for key in keys)
        self.room: dict = {}  # per host, the most tasks of ``keys`` it may take (the variables' bounds)
        held: dict = {}
        for j, h in self.counted.items():
            self.room[h] = self.room.get(h, 0) + self.model.upper[j]
            held.setdefault(h, {})[j] = 1
        self.rows = {member: self.model.row(held[member], lo=0, hi=self.room[member]) for member in costed.prob.caps if member in held}
        self.pywraplp = pywraplp
        self.solver = pywraplp.Solver.CreateSolver("GLOP")
        self.xs, self.constraints = _load(self.solver, self.model, integer=False)

    def bound(self, box: dict, *, seconds: float | None):
        """``(bound, solved, point, counted)`` with every staying member's count within ``box``, or None when counting alone shows no point."""
        if sum(lo for lo, _ in box.values()) > self.total or sum(min(r, box[h][1]) if h in box else r for h, r in self.room.items()) < self.total:
            return None  # the box asks for more tasks than there are, or holds fewer: no point (arithmetic)
        if any(lo > 0 and member not in self.rows for member, (lo, _) in box.items()):
            return None
        boxed = copy.copy(self.model)
        boxed.rows = list(self.model.rows)
        for member, i in self.rows.items():
            lo, hi = box[member]
            boxed.rows[i] = (boxed.rows[i][0], lo, hi)
            self.constraints[i].SetBounds(lo, hi)
        if seconds is not None:
            self.solver.SetTimeLimit(max(1, int(seconds * 1000)))
        if self.solver.Solve() != self.pywraplp.Solver.OPTIMAL:
            return dual_bound(boxed, [0] * len(boxed.rows)), False, (), self.counted
        multipliers = tuple(linear_rational(r.dual_value()) for r in self.constraints)
        return dual_bound(boxed, multipliers), True, tuple(x.solution_value() for x in self.xs), self.counted


def _rational(y: float) -> Fraction:
    return Fraction(round(y * (1 << 20)), 1 << 20)


def _least_mix_choice(per_width: dict, budget: int):
    """:func:`least_mix` and the width each subtopology takes at that least (None when no choice fits)."""
    best: dict[int, tuple] = {0: (Fraction(0), ())}
    for s in sorted(per_width):
        nxt: dict[int, tuple] = {}
        for used, (total, picks) in best.items():
            for k, c in per_width[s].items():
                if used + k <= budget and (used + k not in nxt or total + c < nxt[used + k][0]):
                    nxt[used + k] = (total + c, picks + ((s, k),))
        if not nxt:
            return None
        best = nxt
    return min(best.values(), key=lambda tp: tp[0])


def _priced(costed, spread: int, nu: dict, mu: dict, by_sub: dict, left):
    """One Lagrangian bound at prices ``nu``, ``mu`` (see the module doc): ``(OptionBound, counts of the least choice, instance box)`` or None."""
    prob, d = costed.prob, costed.denominator
    price = {m: nu.get(m, 0) + mu.get(m, 0) for m in prob.caps}
    solved = unsolved = 0

    def box(p, k):
        return {m: (max(0, -(-p * c // d) - k), p * c // d) for m, c in prob.caps.items()}

    constants = [(sum(nu.get(m, 0) * lo + mu.get(m, 0) * hi for m, (lo, hi) in box(p, k).items()), box(p, k), (p, k))
                 for (p, k), z in zip(costed.options["(all)"], costed.z["(all)"]) if costed.model.upper[z] >= 1]
    if not constants:
        return None
    counts: dict = {m: 0.0 for m in prob.caps}
    fixed = Fraction(0)
    if None in by_sub:
        model, counted = _sub_model(costed, by_sub[None], None, price)
        fixed, ok, point = _own_bound(model, seconds=left())
        solved, unsolved = solved + ok, unsolved + (not ok)
        for j, h in counted.items():
            if point and h in counts:
                counts[h] += point[j]
    per_width: dict = {}
    per_option: dict = {}
    points: dict = {}  # (subtopology, K) -> the per-member counts of the least option of that width
    least_option: dict = {}  # (subtopology, K) -> that option
    for s, opts in costed.options.items():
        if s == "(all)":
            continue
        keys = by_sub.get(s, [])
        costs = per_width[s] = {}
        own = per_option[s] = {}
        sub = None  # the subtopology's LP, built at its first live option
        for i, ((p, k), z) in enumerate(zip(opts, costed.z[s])):
            if costed.model.upper[z] < 1:
                continue  # no layout of spread at most ``spread`` takes this option (reduced costs)
            if left() is not None and left() <= 0:
                return None
            sub = sub or _SubLP(costed, keys, price)
            built = sub.bound(box(p, k), seconds=left())
            if built is None:
                continue
            bound, ok, point, counted = built
            solved, unsolved = solved + ok, unsolved + (not ok)
            own[i] = bound
            if k not in costs or bound < costs[k]:
                costs[k] = bound
                least_option[(s, k)] = (p, k)
                here = {m: 0.0 for m in prob.caps}
                for j, h in counted.items():
                    if point and h in here:
                        here[h] += point[j]
                points[(s, k)] = here
    chosen = _least_mix_choice(per_width, spread)
    if chosen is None:
        return None
    mix, picks = chosen
    for pick in picks:
        for m, v in points.get(pick, {}).items():
            counts[m] += v
    constant, inst_box, inst_option = min(constants, key=lambda cb: cb[0])
    found = OptionBound(bound=constant + fixed + mix, priced=bool(nu or mu), price=price, per_width=per_width, per_option=per_option,
                        fixed=fixed, solved=solved, unsolved=unsolved, mix=(("(all)", inst_option), *((s, least_option[(s, k)]) for s, k in picks)))
    return found, counts, inst_box


def option_bound(costed, spread: int, *, multipliers=None, target: int | None = None, rounds: int = 0,
                 deadline_end: float | None = None) -> OptionBound | None:
    """A lower bound on the cost of every layout of least imbalance and spread at most ``spread`` (see the module doc); None past the deadline.

    ``costed``: the :class:`rebalproof.solver.choice.ChoiceModel` built with ``spread_at_most=spread``;
    ``multipliers``: one per row of its model (its LP's), the instance rows' give the first prices
    (None: no prices). Then up to ``rounds`` subgradient steps towards ``target`` (the cost of a
    layout found) move the prices; each step's bound is a true bound, the best is returned.
    """
    prob = costed.prob
    nu: dict = {}
    mu: dict = {}
    if multipliers is not None:
        for (g, member), (hi_row, lo_row) in costed.member_rows.items():
            if g == "(all)":
                mu[member] = min(Fraction(0), _rational(multipliers[hi_row]))
                nu[member] = max(Fraction(0), _rational(multipliers[lo_row]))
    by_sub: dict = {}
    for key, cls in prob.classes.items():
        by_sub.setdefault(cls.sub if cls.sub in costed.options else None, []).append(key)

    def left():
        return None if deadline_end is None else deadline_end - time.monotonic()

    best = None
    step = 1.0
    for _ in range(rounds + 1):
        got = _priced(costed, spread, nu, mu, by_sub, left)
        if got is None:
            break
        found, counts, inst_box = got
        if best is None or found.bound > best.bound:
            best = found
        if target is None or math.ceil(best.bound) >= target:
            break
        g_nu = {m: lo - counts[m] for m, (lo, _) in inst_box.items()}
        g_mu = {m: hi - counts[m] for m, (_, hi) in inst_box.items()}
        norm = sum(v * v for v in g_nu.values()) + sum(v * v for v in g_mu.values())
        if norm < 1e-9:
            break
        t = step * float(target - found.bound) / norm
        nu = {m: max(Fraction(0), nu.get(m, 0) + _rational(t * g_nu[m])) for m in prob.caps}
        mu = {m: min(Fraction(0), mu.get(m, 0) + _rational(t * g_mu[m])) for m in prob.caps}
        step *= 0.7
    return best


def add_option_rows(costed, found: OptionBound) -> int:
    """Per subtopology, ``its priced cost >= sum_o c(s, o) z_o`` added to ``costed``'s model (for SCIP's search); the rows added.

    Valid at every integer point of the model: one ``z`` is 1 and the subtopology's priced cost
    under that option is at least its ``c(s, o)`` (see the module doc; options with no point keep 0).
    """
    model, prob = costed.model, costed.prob
    added = 0
    for s, own in sorted(found.per_option.items()):
        terms: dict = {}
        for key, cls in prob.classes.items():
            if cls.sub != s:
                continue
            for h in cls.hosts:
                j = costed.x[(key, h)]
                terms[j] = model.objective.get(j, 0) - found.price.get(h, 0)
            for o in cls.owners:
                j = costed.kept[(key, o)]
                terms[j] = model.objective.get(j, 0)
        if not own:
            continue
        model.row(terms | {costed.z[s][i]: -c for i, c in own.items()}, lo=0)
        added += 1
    return added


def whole_rows(model: Linear, *, grid: int = 64) -> Linear:
    """A copy of ``model`` with every row of fractional coefficients (:func:`add_option_rows`'s) made whole, for a tree proof.

    Each such row is ``sum_j a_j x_j >= lo`` over variables whose lower bounds are at least 0
    (counts, kept tasks, choices): times ``grid``, every coefficient rounded up and ``lo`` down,
    it holds wherever the row did (a larger coefficient on a value >= 0 adds, never takes), so
    every point of ``model`` is a point of the copy and a bound on the copy bounds ``model``.
    Raises ValueError on any other row with fractional coefficients.

    >>> m = Linear()
    >>> x = m.var(0, 3)
    >>> m.row({x: Fraction(1, 3)}, lo=Fraction(1, 2))
    0
    >>> whole_rows(m).rows
    [({0: 22}, 32, None)]
    """
    whole = Linear()
    whole.lower, whole.upper, whole.integer = list(model.lower), list(model.upper), list(model.integer)
    whole.objective = dict(model.objective)
    for terms, lo, hi in model.rows:
        if all(a == int(a) for a in terms.values()) and (lo is None or lo == int(lo)) and (hi is None or hi == int(hi)):
            whole.rows.append((terms, lo, hi))
            continue
        if hi is not None or lo is None or any(model.lower[j] < 0 for j in terms):
            raise ValueError("only rows 'sum >= lo' over variables >= 0 are made whole")
        whole.rows.append(({j: math.ceil(a * grid) for j, a in terms.items()}, math.floor(lo * grid), None))
    return whole


@dataclass(frozen=True)
class Tightened:
    """What :func:`tighten` proved: the best whole bound, how many rounds, the LPs solved per round."""

    bound: int
    rounds: int
    solved: int
    last_lp: Fraction | None
    mixes: tuple = ()  # each round's least mix of options (:attr:`OptionBound.mix`), last first: hints for layouts


def tighten(costed, spread: int, lp, *, target: int, deadline_end: float | None, rounds: int = 30) -> Tightened:
    """Rounds of: price by the LP's multipliers, bound each option (:func:`option_bound`), add its rows, solve the LP again.

    ``costed`` gains the rows (use a model of its own: the rows are for the bound and slow a
    branch and bound). Every round's bounds are true bounds: the option bound by itself, and
    the LP's multipliers over a model whose every row holds at every integer point
    (:func:`add_option_rows`), checked by exact arithmetic. Stops at ``target`` (the cost of a
    layout found), after ``rounds``, when the LP gains less than a thousandth of a move, when
    the LP solver gives no answer, or at ``deadline_end`` (no round is begun with less time left
    than the last one took: a round's LPs and exact checks run to their end).
    """
    best, done, solved, last = lp.integer_bound, 0, 0, lp.bound
    mixes: list = []

    def left():
        return None if deadline_end is None else deadline_end - time.monotonic()

    took = 0.0  # the last round's seconds: a round is not begun with less time left (one round's LPs and exact checks run to their end)
    growing = GrowingRelaxation(costed.model)  # each round's LP from the last one's basis (leaving 50x500 seed 441: 0.6 s a round from scratch, loaded)
    for done in range(1, rounds + 1):
        if left() is not None and left() <= took:
            break
        begun = time.monotonic()
        mixed = option_bound(costed, spread, multipliers=lp.multipliers, deadline_end=deadline_end)
        if mixed is None:
            break
        solved += mixed.solved
        mixes.insert(0, mixed.mix)
        best = max(best, mixed.integer_bound)
        if best >= target or not add_option_rows(costed, mixed):
            break
        nxt = growing.solve(seconds=left())
        if nxt is None:
            break
        best = max(best, nxt.integer_bound)
        gain, lp, last = nxt.bound - lp.bound, nxt, nxt.bound
        took = time.monotonic() - begun
        if best >= target or gain * 1000 < costed.prob.weight:
            break
    return Tightened(bound=best, rounds=done, solved=solved, last_lp=last, mixes=tuple(mixes))
