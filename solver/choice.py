"""Spread, then moves and restore, by the box-choice model: each group picks one (level, width) box.

With capacities, a group's (one subtopology's, or all tasks') imbalance is ``K`` exactly when
its counts lie in the box ``max(0, ceil(p*c_m/D) - K) <= n_m <= floor(p*c_m/D)`` for its own
level ``p/D`` (the top load; ``D`` the capacities' least common multiple) -- see
:mod:`rebalproof.solver.objectives`. So every layout of least imbalance picks, per group, one
*option* ``(p, K)`` from a finite list, and its spread is the sum of the subtopologies' ``K``:

- options: ``K`` from the group's flow-proven least (:func:`rebalproof.solver.placement.analyse_group`)
  up to that least plus the slack ``U - sum of the leasts`` of a layout of spread ``U`` already
  found (a layout of spread at most ``U`` has no group wider), ``p`` from the proven least top
  load up while the lower bounds still fit the group's tasks; the instance group's ``K`` is its
  proven least imbalance;
- variables: per (class of interchangeable tasks, host) a count ``x``, per option a 0/1 choice
  ``z`` (one per group), and per group and capacity the chosen box's bounds ``H_gc`` and
  ``L_gc`` (linear in ``z``); rows: every class placed, each member's count of the group within
  ``[L_gc, H_gc]``; for moves and restore also per (class, owner) the tasks kept on their owner.

Every layout of least imbalance and spread at most ``U`` is a point of the model (its own
options chosen), so the model's least objective bounds the layouts'. The bound is proven by the
LP relaxation's multipliers, checked by exact arithmetic (:func:`rebalproof.solver.linear.dual_bound`):
on the cluster benchmark its ceiling is usually the optimum itself. The layouts come from SCIP
on the same model (a point is a layout: its counts are decoded, scored by
:func:`rebalproof.solver.objectives.evaluate` and judged by the rules like any other). Where
the ceiling is below SCIP's best, the optimum is SCIP's word (branch and bound), and the
answer says so (method ``scip``). Moves and restore are then a min-cost flow within the own
boxes of the layout found (potentials checked), bounded below by the same LP argument over the
model with the spread at its optimum.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

from rebalproof.model.names import subtopology_of
from rebalproof.solver.linear import Linear, fixed_bounds, integer_solution, relaxation
from rebalproof.solver.objectives import imbalance
from rebalproof.solver.option_bound import tighten, whole_rows
from rebalproof.solver.tree import dive, prove_at_least

__all__ = ["options", "ChoiceModel", "ChoiceSearch", "search_choices", "own_options", "TooManyLevels"]

#: Levels ``p`` :func:`options` walks at most (``D``, the capacities' least common multiple, makes
#: them many: 720,720 per task for capacities 1..16, ~2^63 for one capacity near 2^63).
MOST_LEVELS = 2_000_000


class TooManyLevels(Exception):
    """:func:`options` passed its deadline or :data:`MOST_LEVELS`: the box-choice model is not built."""


def options(caps: dict, denominator: int, *, total: int, least: int, top: Fraction, widest: int,
            end: float | None = None) -> list[tuple[int, int]]:
    """Every ``(p, K)`` a group's own box can have with ``least <= K <= widest`` (see the module doc).

    ``p`` starts at the least top load times ``D`` and stops where even ``K = widest`` asks the
    members for more than ``total`` tasks (larger ``p`` only asks more) or where ``p/D`` passes
    ``total`` over the least capacity (no member's load can be higher). ``K`` never passes
    ``ceil(p*c_max/D)``: no count is below 0. Raises :class:`TooManyLevels` past ``end``
    (``time.monotonic()``) or :data:`MOST_LEVELS` levels (red team 15: capacities 1..16 and 300
    tasks walked for minutes past ``--timeout 5``; a capacity near 2^63 for ever).
    """
    d, cmax, cmin = denominator, max(caps.values()), min(caps.values())
    out = []
    p = math.ceil(top * d)
    walked = 0
    while p * cmin <= d * max(total, 0):
        walked += 1
        if walked % 4096 == 0 and (walked > MOST_LEVELS or (end is not None and time.monotonic() > end)):
            raise TooManyLevels(f"{walked} levels of the box-choice options")
        hi_k = min(widest, -(-p * cmax // d))
        if sum(max(0, -(-p * c // d) - hi_k) for c in caps.values()) > total:
            break
        for k in range(least, hi_k + 1):
            if sum(max(0, -(-p * c // d) - k) for c in caps.values()) <= total:
                out.append((p, k))
        p += 1
    return out


def own_options(prob, host: dict, denominator: int) -> dict:
    """Per group (each subtopology and ``(all)``) the ``(p, K)`` of ``host``'s own box."""
    counts = {g: {m: 0 for m in prob.caps} for g in [*prob.subs, "(all)"]}
    for t, m in host.items():
        if m in prob.caps:
            counts[subtopology_of(t)][m] += 1
            counts["(all)"][m] += 1
    out = {}
    for g, n in counts.items():
        top = max(Fraction(n[m], prob.caps[m]) for m in prob.caps)
        out[g] = (int(top * denominator), imbalance(n, prob.caps))
    return out


class ChoiceModel:
    """The box-choice model of ``prob`` (:class:`rebalproof.solver.placement._Problem`) as a :class:`Linear`.

    ``spread_at_most`` None: minimise the spread; else keep it at most that and minimise
    ``W*moves + cold actives`` (the min-cost flow's cost). ``slack``: how far above its least a
    subtopology's width may go (from a layout already found). ``bounds``: ``(lower, upper)`` of
    the spread model's variables (same ``slack``) that every layout of spread at most
    ``spread_at_most`` keeps (:func:`rebalproof.solver.linear.fixed_bounds`).
    """

    def __init__(self, prob, inst, subs: dict, *, slack: int, spread_at_most: int | None = None, bounds=None, end: float | None = None,
                 known_options: dict | None = None):
        self.prob = prob
        caps = prob.caps
        self.denominator = d = math.lcm(*sorted(set(caps.values())))
        self.model = m = Linear()
        self.x: dict = {}
        totals: dict = {}
        for key, cls in prob.classes.items():
            q = len(cls.tasks)
            for h in cls.hosts:
                self.x[(key, h)] = m.var(0, q)
            m.row({self.x[(key, h)]: 1 for h in cls.hosts}, lo=q, hi=q)
            if any(h in caps for h in cls.hosts):
                totals[cls.sub] = totals.get(cls.sub, 0) + q
        held: dict = {}  # (group, member) -> the count variables of that member in that group
        for (key, h), j in self.x.items():
            for g in ("(all)", prob.classes[key].sub):
                held.setdefault((g, h), []).append(j)
        self.groups = {"(all)": (inst.top, inst.least, inst.least)} | {s: (g.top, g.least, g.least + slack) for s, g in subs.items()}
        totals["(all)"] = sum(totals.values())
        self.options: dict = {}
        self.z: dict = {}
        self.member_rows: dict = {}  # (group, member) -> (row of count <= H, row of count >= L)
        self.pick_rows: dict = {}  # group -> its row "one option picked"
        capset = sorted(set(caps.values()))
        for g, (top, least, widest) in self.groups.items():
            opts = self.options[g] = (known_options[g] if known_options is not None
                                      else options(caps, d, total=totals.get(g, 0), least=least, top=top, widest=widest, end=end))
            if not opts:
                raise AssertionError(f"no box option for group {g}: the least layouts' own boxes are missing")
            zs = self.z[g] = [m.var(0, 1) for _ in opts]
            self.pick_rows[g] = m.row({z: 1 for z in zs}, lo=1, hi=1)
            for c in capset:
                hi_c = [p * c // d for p, _ in opts]
                lo_c = [max(0, -(-p * c // d) - k) for p, k in opts]
                h = m.var(0, max(hi_c), integer=False)
                lo = m.var(0, max(lo_c), integer=False)
                m.row({h: 1} | {z: -v for z, v in zip(zs, hi_c)}, lo=0, hi=0)
                m.row({lo: 1} | {z: -v for z, v in zip(zs, lo_c)}, lo=0, hi=0)
                for member, cap in caps.items():
                    if cap != c:
                        continue
                    count = dict.fromkeys(held.get((g, member), ()), 1)
                    self.member_rows[(g, member)] = (m.row(count | {h: -1}, hi=0), m.row(count | {lo: -1}, lo=0))
        width = {z: k for s in prob.subs for z, (_, k) in zip(self.z[s], self.options[s])}
        if bounds is not None:
            lower, upper = bounds
            for j in range(len(m.lower)):
                m.lower[j], m.upper[j] = max(m.lower[j], lower[j]), min(m.upper[j], upper[j])
        self.kept: dict = {}
        if spread_at_most is None:
            m.minimise(width)
            return
        m.row(width, hi=spread_at_most)
        w = prob.weight
        cost: dict = {}
        kept_by: dict = {}  # (subtopology, owner) -> its kept variables and how many each may keep
        for key, cls in prob.classes.items():
            for h in cls.hosts:
                cost[self.x[(key, h)]] = (w if cls.owned else 0) + (1 if h in cls.cold else 0)
            for o, n in cls.owners.items():
                k = self.kept[(key, o)] = m.var(0, n)
                m.row({k: 1, self.x[(key, o)]: -1}, hi=0)
                kept_by.setdefault((cls.sub, o), []).append((k, n))
                cost[k] = -w
        for (sub, o), kept in sorted(kept_by.items()):  # kept on an owner: at most its own box's upper bound there, option by option
            owned = sum(n for _, n in kept)
            hi_o = [p * caps[o] // d for p, _ in self.options[sub]] if o in caps else None
            if hi_o is not None and owned < max(hi_o):
                m.row({k: 1 for k, _ in kept} | {z: -min(v, owned) for z, v in zip(self.z[sub], hi_o)}, hi=0)
        m.minimise(cost)

    def choices(self) -> list[tuple[int, list[int]]]:
        """Per group, its pick row and option variables narrowest first (then by level): what :func:`rebalproof.solver.tree.prove_at_least` branches on."""
        return [(self.pick_rows[g], [z for (p, k), z in sorted(zip(opts, self.z[g]), key=lambda oz: (oz[0][1], oz[0][0]))])
                for g, opts in self.options.items()]

    def point(self, host: dict) -> list[int]:
        """The model's point of layout ``host`` (its own options chosen; the box bounds they give)."""
        prob, d = self.prob, self.denominator
        x = [0] * len(self.model.lower)
        for key, cls in prob.classes.items():
            for t in cls.tasks:
                x[self.x[(key, host[t])]] += 1
        own = own_options(prob, host, d)
        for g, opts in self.options.items():
            x[self.z[g][opts.index(own[g])]] = 1
        for terms, lo, hi in self.model.rows:  # the H and L definitions: one free variable, set so the row holds
            free = [j for j in terms if not self.model.integer[j]]
            if len(free) == 1 and lo == hi == 0:
                j = free[0]
                x[j] = -sum(a * x[i] for i, a in terms.items() if i != j)
        for (key, o), k in self.kept.items():
            x[k] = min(x[self.x[(key, o)]], prob.classes[key].owners[o])
        return x

    def rounded(self, point) -> tuple[dict, dict]:
        """The boxes of the option each group weighs most in a fractional ``point`` (the LP's): ``(inst_box, sub_boxes)``."""
        d, boxes = self.denominator, {}
        for g, opts in self.options.items():
            p, k = max(zip(opts, self.z[g]), key=lambda oz: (point[oz[1]], -oz[0][1], oz[0][0]))[0]
            boxes[g] = {m: (max(0, -(-p * c // d) - k), p * c // d) for m, c in self.prob.caps.items()}
        return boxes["(all)"], {s: boxes[s] for s in self.prob.subs}

    def layout(self, x) -> dict[str, str]:
        """Task -> member of an integer point (the most tasks kept on their owner its counts allow)."""
        counts, kept = {}, {}
        for (key, h), j in self.x.items():
            counts.setdefault(key, {})[h] = x[j]
        for key, cls in self.prob.classes.items():
            kept[key] = {o: min(n, counts[key].get(o, 0)) for o, n in cls.owners.items()}
        return self.prob.decode(counts, kept)


@dataclass
class ChoiceSearch:
    """What :func:`search_choices` proved (the fields :func:`rebalproof.solver.placement._timed_out` reads, as :class:`rebalproof.solver.benders.BoxSearch`)."""

    spread: int | None
    spread_lower: int
    spread_method: str = "arithmetic"
    spread_proof: str = ""
    best: tuple | None = None  # (host, moves, cold, FlowSolution) at spread ``spread``
    cost_lower: int = 0
    cost_method: str = "arithmetic"
    cost_proof: str = ""
    done: bool = False
    solves: list = field(default_factory=list)  # (what, seconds) of each LP and SCIP solve, for the notes


def _left(deadline) -> float | None:
    return None if deadline.end is None else deadline.end - time.monotonic()


def search_choices(prob, inst, subs: dict, *, upper: int, deadline, stage3, boxes_of, soft=None) -> ChoiceSearch:
    """Least spread, then least ``W*moves + cold``, over the box-choice model (see the module doc).

    ``upper``: the spread of a layout of least imbalance already found. ``stage3(inst_box,
    sub_boxes)`` is the min-cost flow within boxes (or None); ``boxes_of(host)`` the own boxes of
    a layout (``(inst_box, sub_boxes)``), ``soft(inst_box, sub_boxes)`` a layout near boxes no
    flow fits (or None). Each stage first rounds the LP's point (per group the option it weighs
    most) and judges those boxes by one flow (else takes the soft layout near them); SCIP is
    asked only when that layout does not meet the LP's bound. The cost model is narrowed by the
    spread LP's reduced costs to what layouts of the optimal spread can take
    (:func:`rebalproof.solver.linear.fixed_bounds`). ``spread`` stays None until it is proven.
    """
    floor = sum(g.least for g in subs.values())
    out = ChoiceSearch(spread=None, spread_lower=floor)
    d = math.lcm(*sorted(set(prob.caps.values())))

    def timed(what, run):
        started = time.monotonic()
        result = run()
        out.solves.append((what, time.monotonic() - started))
        return result

    def spread_of(host):
        return sum(k for g, (_, k) in own_options(prob, host, d).items() if g != "(all)")

    def scip_seconds(share=0.85):
        left = _left(deadline)
        return 3600.0 if left is None else max(0.1, share * left - 0.5)  # loading the model and decoding come on top

    try:
        model = ChoiceModel(prob, inst, subs, slack=max(0, upper - floor), end=deadline.end)
    except TooManyLevels:
        return out  # nothing proven here: the layouts found before stand, INCONCLUSIVE past the deadline
    lp = None if deadline.passed else timed("LP of the spread", lambda: relaxation(model.model, seconds=_left(deadline)))
    if lp is None or deadline.passed:
        return out
    if lp.integer_bound > out.spread_lower:
        out.spread_lower, out.spread_method, out.spread_proof = lp.integer_bound, "lp-dual", _lp_words(model, lp, "spread", upper)
    best, width = None, None
    boxes = model.rounded(lp.point)
    rounded = timed("flow in the LP's boxes", lambda: stage3(*boxes))
    if rounded is None and soft is not None and not deadline.passed:  # the boxes made soft: a layout near them
        near = timed("soft flow near the LP's boxes", lambda: soft(*boxes))
        rounded = None if near is None else stage3(*boxes_of(near))
    if rounded is not None:
        best, width = rounded, spread_of(rounded[0])
    spread_lp = lp

    paused: dict = {}  # id of a model -> its tree search stopped by time (resumed when the same target is asked again)

    def searched_tree(linear, target, share, what="", nodes=None):
        """:func:`prove_at_least` on ``linear`` for ``target`` within ``share`` of the time left (and ``nodes`` LPs): the :class:`TreeProof`, root checked or None.

        A point the search meets below ``target`` lowers the target to its value and the search
        goes on (``improve``): the tree then proves that point least. A search of the same model
        and target stopped by time earlier goes on from where it stopped (leaving 50x500 seed
        441: the spread's tree for 128 stopped after 16.5 s and its re-proof after SCIP, begun
        again, after 10.2 s, where one tree of 15 s wall closes it; loaded)."""
        left = _left(deadline)
        end = None if left is None else time.monotonic() + share * left - 0.5  # building the answer comes on top, as SCIP's
        before = paused.pop(id(linear.model), None)
        resume = before if before is not None and before.target == target else None
        found = timed(f"checked tree for >= {target}{what}" + (" (resumed)" if resume is not None else ""),
                      lambda: prove_at_least(linear.model, target, choices=linear.choices(), deadline_end=end, max_nodes=nodes or 100_000, improve=True,
                                             resume=resume))
        if found.paused is not None:
            paused[id(linear.model)] = found.paused
        return found

    def cost_tree(linear, target, share, what=""):
        """A checked branch-and-bound proof that ``linear`` has no point below ``target`` or below a better layout it meets (kept as the best); None if not found in ``share`` of the time left."""
        found = searched_tree(linear, target, share, what)
        if found.better is not None:
            met = stage3(*boxes_of(linear.layout(found.better)))
            if met is not None and spread_of(met[0]) <= width and met[3].cost < out.best[3].cost:
                out.best = met
        return found if found.root is not None and found.target >= out.best[3].cost else None

    def prove_spread(target, share, nodes=None):
        """A checked tree for ``target`` raising the spread's bound; a point it meets below ``target`` kept as the best layout (the tree, if it closes, then proves that point's spread least)."""
        nonlocal best, width
        found = searched_tree(model, target, share, nodes=nodes)
        if found.better is not None:
            met = stage3(*boxes_of(model.layout(found.better)))
            if met is not None and (width is None or spread_of(met[0]) < width):
                best, width = met, spread_of(met[0])
        if found.root is not None:
            out.spread_lower, out.spread_method, out.spread_proof = found.target, "lp-tree", _tree_words(model, found, "spread", found.target, spread_lp.integer_bound)
        return found.root is not None

    # A tree before SCIP only where the layout found is one above the bound (a tenth of the time
    # left): it then closes the spread without SCIP. A tree for one above the bound whatever the
    # layout (35% of the time left, 150 LPs), which lifts the bound SCIP is given as a row, proved
    # 128 at leaving 50x500 seed 441 (LP 127.0) but cost SCIP the optimum where the LP's bound is
    # it (unequal 50x500 and 100x1000 seed 441, leaving 100x1000 seed 442: bench at bea14e8, 3 of 8
    # proven against 6 of 8 before it): dropped
    # An LP dive (each group's option fixed in turn as the LP weighs it, then one flow) finds the
    # optimum in seconds where SCIP took half a minute (unequal 100x1000 seed 441: 302, the LP's
    # bound, in 2.0 s vs 31 s; leaving 50x500 seed 441: 128, one above it, in 0.7 s vs 23 s). Its
    # layout is taken only once its spread is proven least: above the optimum its moves are least
    # only within its own boxes, and the oracle's `stable` found a needless stateless move in one
    # (leaving 100x1000 seed 441, spread 186), so a timeout keeps the LP's and SCIP's layouts
    dived = None
    if (width is None or width > out.spread_lower) and not deadline.passed:
        dived = timed("LP dive", lambda: _dived(model, stage3, deadline, 0.3))
        if dived is not None and width is not None and spread_of(dived[0]) >= width:
            dived = None

    def scip_spread(share):
        """SCIP on the whole model for ``share`` of the time left, stopping at a layout meeting the checked bound.

        Hinted with the dive's layout (unequal 50x500 seed 441: the LP's 147 in 15.5 s, where
        unhinted it had 154 after 25 s; leaving 100x1000 seed 441: 186 vs 187 in 30 s; measured
        apart). Narrowing the model by reduced costs below the soft layout, or hinting that layout,
        made SCIP find worse layouts on the 100x1000 benchmark (one run each)."""
        nonlocal best, width
        hint = None if dived is None else model.point(dived[0])
        status, x, bound = timed("SCIP on the spread", lambda: integer_solution(_at_least(model.model, out.spread_lower), seconds=scip_seconds(share), hint=hint))
        if x is not None:
            found = stage3(*boxes_of(model.layout(x)))
            if found is None:
                raise AssertionError("no flow fits the own boxes of a layout")
            if width is None or spread_of(found[0]) < width:
                best, width = found, spread_of(found[0])
            if status == "optimal" and bound > out.spread_lower:
                out.spread_lower, out.spread_method = min(bound, width), "scip"
                out.spread_proof = (f"SCIP's branch and bound over the box-choice model finds no layout of spread <= {out.spread_lower - 1} "
                                    f"(the LP relaxation's multipliers, checked here, prove {lp.integer_bound}): the solver's word")

    target = width if dived is None else spread_of(dived[0])
    if dived is not None and target == out.spread_lower + 1 and deadline.end is not None and not deadline.passed:
        # the dive one above the LP's bound: either the LP's bound is the optimum and a layout is
        # missing (unequal 50x500 seed 441: SCIP, hinted, met 147 in 3.8 s, where the tree for 148
        # ran 20 s in vain) or the dive's layout is and its proof is (leaving 50x500 seed 441, 128:
        # a tree of 93 LPs); a short hinted SCIP first, then the tree (with no time limit, the tree
        # alone: it meets any better point on its way)
        scip_spread(0.15)
        target = target if width is None else min(target, width)
    if target is not None and target == out.spread_lower + 1 and not deadline.passed:  # a layout one above the LP's bound: only its proof is missing
        prove_spread(target, 0.1 if dived is None else 0.35)
    if dived is not None and spread_of(dived[0]) <= out.spread_lower and (width is None or spread_of(dived[0]) < width):
        best, width = dived, spread_of(dived[0])
    if width is None or width > out.spread_lower:
        scip_spread(0.85)
    out.best = best
    if best is None or width > out.spread_lower or deadline.passed:
        return out
    out.spread = width
    # SCIP's word on the spread re-proven by a checked tree before the moves (the moves' optimum rests on it), half the time
    # left; stopped there, the same tree goes on after the moves' stage (resumed). Leaving 50x500 seed 441: the tree for 128
    # (18.9 s, loaded) ran after the option bound's rounds and left the moves' tree 0.7 s
    if out.spread_method == "scip" and not deadline.passed:
        prove_spread(out.spread_lower, 0.5)

    # the same groups and slack as the spread model: its options, not walked again
    costed = ChoiceModel(prob, inst, subs, slack=max(0, upper - floor), spread_at_most=width,
                         bounds=fixed_bounds(model.model, spread_lp.multipliers, width), known_options=model.options)
    lp = timed("LP of moves and restore", lambda: relaxation(costed.model, seconds=_left(deadline)))
    if lp is None:
        return out
    optioned = None  # the cost model with tighten's option rows made whole: a tree over it closes sooner
    out.cost_lower, out.cost_method, out.cost_proof = lp.integer_bound, "lp-dual", _lp_words(costed, lp, "cost", width)
    if out.best[3].cost > out.cost_lower and not deadline.passed:  # each subtopology's options taken whole, the instance's rows priced by the LP
        bounding = ChoiceModel(prob, inst, subs, slack=max(0, upper - floor), spread_at_most=width,
                               bounds=fixed_bounds(model.model, spread_lp.multipliers, width), known_options=model.options)
        share = None if deadline.end is None else time.monotonic() + 0.5 * _left(deadline)  # SCIP and the tree keep the rest
        tight = timed("rounds of option bounds and LP", lambda: tighten(bounding, width, lp, target=out.best[3].cost, deadline_end=share))
        if tight.bound > out.cost_lower:
            out.cost_lower, out.cost_method, out.cost_proof = tight.bound, "option-lp", _option_words(tight, width, lp.integer_bound)
        if len(bounding.model.rows) > len(costed.model.rows):
            try:
                optioned = _Rowed(whole_rows(bounding.model), bounding.choices(), tight, bounding.layout)
            except ValueError:
                pass
    mixed = False  # whether a least mix of the option bound gave a better layout
    if optioned is not None and out.best[3].cost > out.cost_lower:  # the option bound's least mixes: a flow in each mix's boxes (a Lagrangian layout)
        found = timed("flows in the option bound's mixes", lambda: _mixed(prob, optioned.tight, stage3, deadline))
        if found is not None and spread_of(found[0]) <= width and found[3].cost < out.best[3].cost:
            out.best, mixed = found, True
    if out.best[3].cost > out.cost_lower and not deadline.passed:
        rounded = timed("flow in the LP's boxes", lambda: stage3(*costed.rounded(lp.point)))
        if rounded is not None and spread_of(rounded[0]) <= width and rounded[3].cost < out.best[3].cost:
            out.best = rounded
    # An LP dive over the cost model (with the option rows where tighten added them), as the spread's: unequal 50x500 seed 441's
    # optimum, 70119, in 1.4 s where the flows in the mixes and the LP's boxes gave 70490 and SCIP found nothing better
    # (its tree then closed: proven, every bound checked); loaded, one run each
    if out.best[3].cost > out.cost_lower and not deadline.passed:
        dived = timed("LP dive on moves and restore", lambda: _dived(costed, stage3, deadline, 0.15, over=None if optioned is None else optioned.model))
        if dived is not None and spread_of(dived[0]) <= width and dived[3].cost < out.best[3].cost:
            out.best = dived
    checked_lower = out.cost_lower
    # SCIP, half the time left when a tree over the option rows may follow; none after a mix's layout: the tree (which meets
    # any better point on its way) gets the time (leaving 50x500 seed 441: the mixes' layout is the optimum, 178, where SCIP
    # found 182 in 15 s)
    if out.best[3].cost > out.cost_lower and not deadline.passed and not mixed:
        status, x, bound = timed("SCIP on moves and restore", lambda: integer_solution(_at_least(costed.model, out.cost_lower), seconds=scip_seconds(0.85 if optioned is None else 0.5),
                                                                                      hint=costed.point(out.best[0])))
        if x is not None:
            found = stage3(*boxes_of(costed.layout(x)))
            if found is not None and found[3].cost < out.best[3].cost:
                out.best = found
            if status == "optimal" and bound > out.cost_lower:
                out.cost_lower, out.cost_method = min(bound, out.best[3].cost), "scip"
                out.cost_proof = (f"SCIP's branch and bound over the box-choice model at spread {width} finds no layout cheaper than "
                                  f"{out.cost_lower} (the bounds checked here prove {checked_lower}): the solver's word")
    # SCIP's words, re-proven by trees rebalproof checks, once both optima are known (the spread's first: the moves' optimum rests on it)
    if out.spread_method == "scip" and not deadline.passed:
        prove_spread(out.spread_lower, 0.5 if out.cost_method == "scip" else 0.9)
    if (out.cost_method == "scip" or out.best[3].cost > out.cost_lower) and not deadline.passed:  # SCIP's word, or the best layout's cost when SCIP did not finish
        proof = cost_tree(costed if optioned is None else optioned, out.best[3].cost, 0.9, "" if optioned is None else " with the option rows")
        if proof is None and optioned is not None and not deadline.passed:  # it stopped early (no certificate for an empty node): the bare model
            optioned = None
            proof = cost_tree(costed, out.best[3].cost, 0.9)
        if proof is not None:
            out.cost_lower, out.cost_method = proof.target, "lp-tree"
            out.cost_proof = _tree_words(costed, proof, "cost", proof.target, checked_lower) + ("" if optioned is None else _option_row_words(optioned))
    out.done = out.best[3].cost <= out.cost_lower
    return out


def _mixed(prob, tight, stage3, deadline, most: int = 5):
    """The cheapest layout of a flow within the boxes of the option bound's least mixes (the last ``most`` distinct rounds'), or None.

    Each mix picks one option per group (:attr:`rebalproof.solver.option_bound.OptionBound.mix`),
    the instance's width its least imbalance and the subtopologies' widths within the spread:
    a flow within those boxes is a layout of least imbalance whose spread is at most the bound's.
    """
    d = math.lcm(*sorted(set(prob.caps.values())))
    best, seen = None, set()
    for mix in tight.mixes:
        if mix in seen or len(seen) >= most or deadline.passed:
            continue
        seen.add(mix)
        boxes = {g: {m: (max(0, -(-p * c // d) - k), p * c // d) for m, c in prob.caps.items()} for g, (p, k) in mix}
        found = stage3(boxes.pop("(all)"), boxes)
        if found is not None and (best is None or found[3].cost < best[3].cost):
            best = found
    return best


def _dived(model: ChoiceModel, stage3, deadline, share: float, *, over: Linear | None = None):
    """The layout of an LP dive over ``model`` within ``share`` of the time left (:func:`rebalproof.solver.tree.dive`: a heuristic), its moves least within the boxes the dive picked; or None.

    ``over``: the model's LP with rows added (the option rows made whole), dived instead: its
    variables are ``model``'s, so its points decode the same way."""
    left = _left(deadline)
    end = None if left is None else time.monotonic() + share * left
    point = dive(model.model if over is None else over, model.choices(), deadline_end=end)
    return None if point is None else stage3(*model.rounded(point))


@dataclass(frozen=True)
class _Rowed:
    """A cost model with the option rows of :func:`rebalproof.solver.option_bound.tighten` made whole (``whole_rows``), for a tree."""

    model: Linear
    picks: list
    tight: object  # the Tightened that added the rows
    layout: object  # its points' layouts (its variables are the cost model's: :meth:`ChoiceModel.layout`)

    def choices(self) -> list:
        return self.picks


def _option_row_words(optioned: _Rowed) -> str:
    return (f"; the model there carries the option-lp rows ('priced cost of a subtopology >= the checked bound of the option it picks', "
            f"from {optioned.tight.rounds} round(s), true at every layout), each times 64 with its coefficients rounded up and its bound down "
            f"(every variable being >= 0, still true at every layout)")


def _at_least(model: Linear, lower: int) -> Linear:
    """A copy of ``model`` with the row ``objective >= lower`` (a bound already proven and checked), for SCIP: it stops at the first point meeting it."""
    bounded = copy.copy(model)
    bounded.rows = [*model.rows, (dict(model.objective), lower, None)]
    return bounded


def _lp_words(model: ChoiceModel, lp, what: str, limit: int) -> str:
    options = sum(len(o) for o in model.options.values())
    used = sum(1 for y in lp.multipliers if y)
    scope = f"with spread <= {limit}" if what == "cost" else f"of spread <= {limit} (a layout found)"
    return (f"every layout of least imbalance {scope} is a point of the box-choice model ({len(model.options)} groups, {options} (level, width) options, "
            f"{len(model.model.rows)} rows); {used} row multipliers of its LP relaxation, rounded to fractions and checked by exact arithmetic, "
            f"prove its {what} >= {math.floor(lp.bound * 1000) / 1000:g} (a whole number at every layout, so >= {lp.integer_bound})")


def _tree_words(model: ChoiceModel, proof, what: str, target: int, checked: int) -> str:
    scope = "every layout of least imbalance" + (" with spread <= the proven least" if what == "cost" else "")
    return (f"{scope} is a point of the box-choice model ({len(model.options)} groups, {len(model.model.rows)} rows); a branch and bound over it "
            f"({proof.nodes} LPs solved, {proof.leaves} leaves), each branch splitting one group's options or one count, each node's LP "
            f"multipliers rounded to fractions, the tree re-checked in full by exact arithmetic (every leaf's bound above {target - 1}, the "
            f"objective being whole, after the reduced-cost fixings its multipliers prove): no point has {what} below {target} "
            f"(the LP alone proves {checked})")


def _option_words(tight, width: int, whole_lp: int) -> str:
    return (f"every layout of least imbalance with spread <= {width} picks one (level, width) option per group. In each of {tight.rounds} round(s), "
            f"the instance's count rows are priced by the LP's multipliers (any prices give a true bound), each subtopology's priced cost is "
            f"bounded per option by the LP of its own classes within that option's box ({tight.solved} LPs in all, multipliers rounded to "
            f"fractions and checked by exact arithmetic), the best whole mix of options within the spread is found by exact dynamic "
            f"programming, and the rows 'priced cost of a subtopology >= the bound of the option it picks' (true at every layout) join the "
            f"model, whose LP multipliers, checked by exact arithmetic, bound it again: the cost is >= {tight.bound} "
            f"(the model's LP alone proves {whole_lp})")
