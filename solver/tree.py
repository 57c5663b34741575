"""A branch and bound whose tree is the proof: checked LP multipliers at every node, re-checked here.

Claim: no integer point of a :class:`rebalproof.solver.linear.Linear` model (whole objective:
integer coefficients on integer variables) has objective below ``target``. The certificate is a
tree. Each node holds multipliers ``y`` (one per row) for the model with the node's variable
bounds; :func:`check_tree` recomputes, by exact arithmetic, the bound they prove
(:func:`rebalproof.solver.linear.dual_bound`: LP duality, any multipliers give a true bound).

- A node whose bound is above ``target - 1`` holds no point below ``target`` (the objective is
  whole): a leaf.
- Otherwise its points below ``target`` keep the bounds the same multipliers' reduced costs fix
  (:func:`rebalproof.solver.linear.fixed_bounds` with limit ``target - 1``), and the node names a
  *branch* that splits those points in two, each child checked the same way:

  - ``("split", j, k)``: integer variable ``j`` is ``<= k`` or ``>= k + 1``;
  - ``("choice", i, A)``: row ``i`` is ``sum_{j in S} z_j = 1`` over integer variables with
    lower bound 0 (a group picks one option), so exactly one ``z_j`` is 1 at an integer point:
    either no ``j`` of ``A`` is picked (their upper bounds 0) or none of ``S - A``.

Every integer point below ``target`` lies in some leaf, and no leaf holds one: the claim.

The search (:func:`prove_at_least`) solves each node's LP by HiGHS (SciPy's copy), warm started
(only bounds change); a node with no point at all is closed by HiGHS's dual ray, or a phase-one
LP's multipliers, scaled past the target (a Farkas certificate: a bound like any other).
Multipliers are rounded to multiples of ``2**-24``; the check is exact whatever they are (a wrong
multiplier only weakens a bound, and then the check fails, never passes). Branches: for each of
the choice rows it is given (options ordered, e.g. narrowest first) the split where the LP's
weight passes half; of the eight most balanced, both children of each are solved (strong
branching) and the one raising both bounds most is taken; with no such split, the most
fractional integer variable. Depth first. The tree is re-checked by :func:`check_tree` before
it is returned. :func:`dive` is the search's heuristic sibling: it finds points, not proofs.
"""

from __future__ import annotations

import copy
import heapq
import math
import threading
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import sparse

from rebalproof.solver.linear import Linear
from rebalproof.solver.tree_share import SHARE_AFTER

__all__ = ["Node", "Search", "TreeProof", "check_tree", "dive", "prove_at_least"]

SCALE = 1 << 24
"""Multipliers are numerators over this denominator (HiGHS's floats rounded to it)."""

FINE = float(1 << 48)
"""The largest numerator of a Farkas certificate (a ray, or phase one's duals): any positive multiple proves a node empty alike, and
rounding them as finely keeps the small entries that rows with large coefficients (the option rows made whole) need."""


@dataclass(frozen=True)
class Node:
    """One node of the proof: multipliers (numerators over :data:`SCALE`, sparse ``(row, value)``), a branch or None (a leaf) and two children."""

    multipliers: tuple
    branch: tuple | None = None
    children: tuple = ()


@dataclass(frozen=True)
class TreeProof:
    """What :func:`prove_at_least` found: the checked tree (or None), the nodes it solved, and a better point if it met one."""

    root: Node | None
    nodes: int
    better: tuple | None = None  # an integer point of the model below the target (the target was no optimum)
    reason: str = ""
    target: int | None = None  # what the root proves: the target asked, or with ``improve`` the value of ``better``
    paused: object = None  # a :class:`Search` stopped by time or nodes, to resume (:func:`prove_at_least`)

    @property
    def leaves(self) -> int:
        return 0 if self.root is None else _count_leaves(self.root)


def _count_leaves(root: Node) -> int:
    count, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.branch is None:
            count += 1
        else:
            stack.extend(node.children)
    return count


class _Exact:
    """The model's rows and objective as integer arrays, for exact bounds of scaled multipliers (Python integers where int64 could overflow)."""

    def __init__(self, model: Linear):
        self.model = model
        n = len(model.lower)
        rows, cols, vals = [], [], []
        for i, (terms, _, _) in enumerate(model.rows):
            for j, a in terms.items():
                if a != int(a):
                    raise ValueError("the tree proof takes integer row coefficients only")
                rows.append(i)
                cols.append(j)
                vals.append(int(a))
        self.at = sparse.csr_matrix((np.array(vals, dtype=np.int64), (np.array(cols, dtype=np.int64), np.array(rows, dtype=np.int64))), shape=(n, len(model.rows)), dtype=np.int64)
        self.cost = [0] * n
        for j, c in model.objective.items():
            if c != int(c) or not model.integer[j]:
                raise ValueError("the tree proof takes a whole objective only (integer costs on integer variables)")
            self.cost[j] = int(c)
        self.lo_row = [lo for _, lo, _ in model.rows]
        self.hi_row = [hi for _, _, hi in model.rows]
        self.col_weight = int(abs(self.at).sum(axis=1).max()) if n and len(vals) else 0

    def reduced(self, multipliers: tuple) -> tuple[list[int], int]:
        """``(SCALE * r, SCALE * sum y_i b_i)`` for sparse scaled multipliers; a multiplier of the wrong sign for its row counts 0."""
        y = np.zeros(len(self.model.rows), dtype=object)
        total = 0
        for i, v in multipliers:
            v = int(v)
            if v == 0 or (v > 0 and self.lo_row[i] is None) or (v < 0 and self.hi_row[i] is None):
                continue
            y[i] = v
            total += v * (self.lo_row[i] if v > 0 else self.hi_row[i])
        biggest = max((abs(v) for v in y if v), default=0)
        if biggest * max(1, self.col_weight) < (1 << 62):
            charged = (self.at @ y.astype(np.int64)).tolist()
        else:
            charged = [0] * len(self.cost)
            coo = self.at.tocoo()
            for j, i, a in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()):
                charged[j] += a * y[i]
        return [c * SCALE - int(a) for c, a in zip(self.cost, charged)], total

    def bound(self, multipliers: tuple, lower, upper) -> tuple[Fraction, list[int]]:
        """The bound the multipliers prove with these variable bounds (exact), and the scaled reduced costs."""
        r, total = self.reduced(multipliers)
        for rj, lo, hi in zip(r, lower, upper):
            if rj:
                total += min(rj * lo, rj * hi)
        return Fraction(total, SCALE), r

    def fixed(self, r: list[int], bound: Fraction, limit: int, lower, upper) -> tuple[list[int], list[int]]:
        """:func:`rebalproof.solver.linear.fixed_bounds` with these bounds and scaled reduced costs (exact)."""
        gap = (limit - bound) * SCALE
        lower, upper = list(lower), list(upper)
        if gap < 0:
            return lower, upper
        for j, rj in enumerate(r):
            if rj > 0:
                room = gap / rj
                upper[j] = min(upper[j], lower[j] + (math.floor(room) if self.model.integer[j] else math.ceil(room)))
            elif rj < 0:
                room = gap / -rj
                lower[j] = max(lower[j], upper[j] - (math.floor(room) if self.model.integer[j] else math.ceil(room)))
        return lower, upper


def _is_choice_row(model: Linear, i: int, lower) -> bool:
    terms, lo, hi = model.rows[i]
    return lo == hi == 1 and all(a == 1 and model.integer[j] and lower[j] >= 0 for j, a in terms.items())


def _children(model: Linear, branch, lower, upper):
    """The two children's bounds of a branch, or None when the branch is not one :func:`check_tree` accepts."""
    kind = branch[0]
    if kind == "split":
        _, j, k = branch
        if not (0 <= j < len(lower)) or not model.integer[j] or k != int(k):
            return None
        left_upper, right_lower = list(upper), list(lower)
        left_upper[j], right_lower[j] = min(upper[j], k), max(lower[j], k + 1)
        return (lower, left_upper), (right_lower, upper)
    if kind == "choice":
        _, i, picked = branch
        if not (0 <= i < len(model.rows)) or not _is_choice_row(model, i, lower):
            return None
        group = set(model.rows[i][0])
        if not set(picked) <= group:
            return None
        left, right = list(upper), list(upper)
        for j in group:
            if j in picked:
                left[j] = 0
            else:
                right[j] = 0
        return (lower, left), (lower, right)
    return None


def check_tree(model: Linear, target: int, root: Node) -> bool:
    """Whether ``root`` proves that no integer point of ``model`` has objective below ``target`` (see the module doc), by exact arithmetic.

    Examples
    --------
    >>> m = Linear()
    >>> x, y = m.var(0, 1), m.var(0, 1)
    >>> m.row({x: 2, y: 2}, lo=1)   # the LP takes x = y = 1/4 (value 1/2); integers need one of them
    0
    >>> m.minimise({x: 1, y: 1})
    >>> half = ((0, SCALE // 2),)
    >>> check_tree(m, 1, Node(half))   # the LP alone proves 1/2, rounded up: 1
    True
    >>> check_tree(m, 2, Node(half))   # x = 1 costs 1: no proof of 2
    False
    """
    try:
        exact = _Exact(model)
    except ValueError:
        return False
    stack = [(root, list(model.lower), list(model.upper))]
    while stack:
        node, lower, upper = stack.pop()
        if any(lo > hi for lo, hi in zip(lower, upper)):
            continue  # no point at all
        bound, r = exact.bound(node.multipliers, lower, upper)
        if bound > target - 1:
            continue
        if node.branch is None or len(node.children) != 2:
            return False
        lower, upper = exact.fixed(r, bound, target - 1, lower, upper)
        if any(lo > hi for lo, hi in zip(lower, upper)):
            continue
        kids = _children(model, node.branch, lower, upper)
        if kids is None:
            return False
        for child, (lo, hi) in zip(node.children, kids):
            stack.append((child, lo, hi))
    return True


class _NodeLP:
    """The model's LP by HiGHS (SciPy's copy), warm started: only variable bounds change between solves.

    Each solve gives ``(feasible, multipliers, point)``: the row duals, or for an infeasible node
    HiGHS's dual ray (its sign is found by the caller's exact check) and no point; None when
    HiGHS did not finish.
    """

    def __init__(self, model: Linear, *, elastic: bool = False):
        from scipy.optimize._highspy import _core

        self.model, self.elastic, self.phase_one = model, elastic, None
        self.core = _core
        self.h = h = _core._Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("presolve", "off")
        h.setOptionValue("threads", 1)
        n, inf = len(model.lower), h.getInfinity()
        h.addVars(n, np.array(model.lower, dtype=float), np.array(model.upper, dtype=float))
        if elastic:  # phase one: a slack each way per row, each costing 1, the objective left out
            k = 2 * len(model.rows)
            h.addVars(k, np.zeros(k), np.full(k, inf))
            h.changeColsCost(k, np.arange(n, n + k, dtype=np.int32), np.ones(k))
        else:
            costed = np.array(sorted(model.objective), dtype=np.int32)
            h.changeColsCost(len(costed), costed, np.array([float(model.objective[j]) for j in costed.tolist()]))
        starts, index, value = [], [], []
        for i, (terms, _, _) in enumerate(model.rows):
            starts.append(len(index))
            index.extend(terms)
            value.extend(float(a) for a in terms.values())
            if elastic:
                index.extend((n + 2 * i, n + 2 * i + 1))
                value.extend((1.0, -1.0))
        h.addRows(len(model.rows), np.array([-inf if lo is None else lo for _, lo, _ in model.rows], dtype=float),
                  np.array([inf if hi is None else hi for _, _, hi in model.rows], dtype=float), len(index),
                  np.array(starts, dtype=np.int32), np.array(index, dtype=np.int32), np.array(value, dtype=float))
        self.lower, self.upper = list(model.lower), list(model.upper)

    def solve(self, lower, upper, seconds: float | None):
        changed = [j for j, (lo, hi, was_lo, was_hi) in enumerate(zip(lower, upper, self.lower, self.upper)) if lo != was_lo or hi != was_hi]
        if changed:
            self.h.changeColsBounds(len(changed), np.array(changed, dtype=np.int32), np.array([float(lower[j]) for j in changed]), np.array([float(upper[j]) for j in changed]))
            self.lower, self.upper = list(lower), list(upper)
        self.h.setOptionValue("time_limit", 1e9 if seconds is None else self.h.getRunTime() + max(0.01, seconds))  # HiGHS's clock runs across solves
        self.h.run()
        status = self.h.getModelStatus()
        if status == self.core.HighsModelStatus.kOptimal:
            solution = self.h.getSolution()
            duals = np.asarray(solution.row_dual)
            nonzero = np.flatnonzero(np.abs(duals) > 1e-12)
            scale = FINE / max(1e-12, float(np.abs(duals).max())) if self.elastic else SCALE  # phase one's duals prove emptiness at any scale
            multipliers = tuple(zip(nonzero.tolist(), np.rint(duals[nonzero] * scale).astype(np.int64).tolist()))
            return True, multipliers, np.asarray(solution.col_value).tolist()
        if status == self.core.HighsModelStatus.kInfeasible and not self.elastic:
            _, has, ray = self.h.getDualRay()
            if not has:  # no ray from HiGHS (found infeasible before the simplex ran): the phase-one LP's duals
                if self.phase_one is None:
                    self.phase_one = _NodeLP(self.model, elastic=True)
                answer = self.phase_one.solve(lower, upper, seconds)
                return None if answer is None else (False, answer[1], None)
            ray = np.asarray(ray)
            nonzero = np.flatnonzero(np.abs(ray) > 1e-12)
            scale = FINE / max(1e-12, float(np.abs(ray).max()))
            return False, tuple(zip(nonzero.tolist(), np.rint(ray[nonzero] * scale).astype(np.int64).tolist())), None
        return None

    def probe(self, lower, upper, seconds: float | None) -> float:
        """The LP's value with these bounds, as HiGHS's float (a hint for branching, never a proof; inf: no point)."""
        answer = self.solve(lower, upper, seconds)
        if answer is not None and not answer[0]:
            return float("inf")
        return float(self.h.getInfo().objective_function_value) if answer is not None else 0.0

    def basis(self):
        return self.h.getBasis()

    def compact_basis(self, b=None) -> tuple:
        """The current basis (or ``b``, one :meth:`basis` gave) as two arrays of status codes (picklable: a job in another process starts from it)."""
        b = self.h.getBasis() if b is None else b
        return (np.array([int(v) for v in b.col_status], dtype=np.int8), np.array([int(v) for v in b.row_status], dtype=np.int8))

    def warm(self, basis: tuple) -> None:
        """Start the next solve from a :meth:`compact_basis` (of this model's LP)."""
        status = self.core.HighsBasisStatus
        b = self.core.HighsBasis()
        b.col_status = [status(v) for v in basis[0].tolist()]
        b.row_status = [status(v) for v in basis[1].tolist()]
        b.valid = True
        self.h.setBasis(b)

    def restore(self, basis) -> None:
        self.h.setBasis(basis)


def _choice_split(i, order, point, upper):
    """(balance, branch) of choice row ``i``'s split where the LP's weight passes half, or None
    when fewer than two live options carry weight or the split is not balanced at all."""
    live = [j for j in order if upper[j] > 0]
    if len(live) < 2 or sum(1 for j in live if point[j] > 1e-6) < 2:
        return None
    mass, cut = 0.0, 0
    for cut, j in enumerate(live[:-1], start=1):
        mass += point[j]
        if mass >= 0.5:
            break
    share = sum(point[j] for j in live[:cut])
    score = min(share, 1 - share)
    return (score, ("choice", i, tuple(live[cut:]))) if score > 1e-6 else None


def _candidates(model: Linear, choices, point, lower, upper):
    """Choice-row splits where the LP's weight passes half, most balanced first."""
    out = []
    for i, order in choices:
        split = _choice_split(i, order, point, upper)
        if split is not None:
            out.append((-split[0], i, split[1]))
    out.sort()
    return [b for _, _, b in out]


def _branch(model: Linear, choices, point, lower, upper):
    """The branch of a node: the first most balanced split of a choice row's options by the LP's weight, else the most fractional integer variable."""
    best = None
    for i, order in choices:
        split = _choice_split(i, order, point, upper)
        if split is not None and (best is None or split[0] > best[0]):
            best = split
    if best is not None:
        return best[1]
    frac = None
    for j, v in enumerate(point):
        if model.integer[j] and lower[j] < upper[j]:
            f = v - math.floor(v)
            if 1e-6 < f < 1 - 1e-6 and (frac is None or abs(f - 0.5) < frac[0]):
                frac = (abs(f - 0.5), j, math.floor(v))
    return None if frac is None else ("split", frac[1], frac[2])


def prove_at_least(model: Linear, target: int, *, choices=(), deadline_end: float | None = None, max_nodes: int = 100_000, strong: int = 8,
                   improve: bool = False, resume: "Search | None" = None) -> TreeProof:
    """Search a tree proving ``model``'s integer least is at least ``target`` (module doc); its root only when :func:`check_tree` accepts it.

    ``choices``: ``(row, ordered variables)`` of choice rows to branch on first (row ``i`` of the
    model must be ``sum z = 1`` over them). Stops at ``deadline_end`` (``time.monotonic()``),
    after ``max_nodes`` nodes, or at an integer point below ``target`` (returned as ``better``).
    With ``improve`` it does not stop there: the point is kept as ``better``, the target drops to
    its value and the search goes on (every node closed so far stays closed for a lower target,
    and the fixings made for the higher one keep every point below it), so a finished tree proves
    ``better`` least; ``target`` of the answer says what the root proves.

    A search stopped by time or nodes is returned as ``paused`` (a :class:`Search`); ``resume``
    with it goes on where it stopped (same model and choices; ``target`` is then the paused
    search's, ``max_nodes`` counts on from its nodes), so two short calls prove what one long one
    would: the tree built so far is kept, never solved twice.
    """
    if resume is None:
        if any(lo is not None and hi is not None and lo > hi for _, lo, hi in model.rows):
            return TreeProof(None, 0, reason="a row with its lower bound above its upper: HiGHS takes no such row")
        try:
            resume = Search(model, target, choices=choices, strong=strong, improve=improve)
        except ImportError:  # a SciPy without HiGHS's Python module: no tree, the caller keeps its other proofs
            return TreeProof(None, 0, reason="SciPy >= 1.15 is needed for HiGHS's LPs")
    elif resume.model is not model:
        raise ValueError("a paused search resumes on its own model only")
    return resume.run(deadline_end=deadline_end, max_nodes=max_nodes)


class Search:
    """The state of one :func:`prove_at_least` search: the tree built so far, its open nodes, the warm LP.

    Depth first: a node's two children are solved when it is taken from the stack, then pushed
    (the second on top). A node whose children are not all solved when time runs out goes back
    on the stack, its solved children kept in place, so :meth:`run` can go on later.
    """

    def __init__(self, model: Linear, target: int, *, choices=(), strong: int = 8, improve: bool = False, parts=None, root_bounds=None,
                 share: bool = True):
        self.model, self.target, self.choices, self.strong, self.improve = model, target, choices, strong, improve
        self.exact, self.phase1, self.lp = parts if parts is not None else (_Exact(model), _Exact(_without_objective(model)), _NodeLP(model))
        self.root_bounds = root_bounds if root_bounds is not None else (list(model.lower), list(model.upper))
        self.share = share  # open subtrees become jobs after SHARE_AFTER nodes (rebalproof.solver.tree_share)
        self._helper_tried = False  # a helper process was asked for once (one per search at most)
        self._runner = None  # this process's job runner (rebalproof.solver.tree_share.Runner), made at the first shared step
        self.solved = 0
        self.met = None  # with ``improve``: the best integer point below the target asked
        self.root = None
        self.stack: list = []
        self.closed = False  # no proof is possible any more (a point below the target without improve, or nothing to branch on)
        self.reason = ""

    def run(self, *, deadline_end: float | None, max_nodes: int, check: bool = True) -> TreeProof:
        if self.closed:
            return TreeProof(None, self.solved, self.met, reason=self.reason)
        try:
            if self.root is None:
                self.root = self._expand(list(self.root_bounds[0]), list(self.root_bounds[1]), deadline_end, max_nodes)
                self.stack = [self.root]
            while self.stack:
                if self.share and self.solved >= SHARE_AFTER:
                    self._shared(deadline_end, max_nodes)
                    break
                node = self.stack.pop()
                try:
                    for k, child in enumerate(node.children):
                        if isinstance(child, _Pending):
                            kids = list(node.children)
                            kids[k] = self._expand(child.lower, child.upper, deadline_end, max_nodes)
                            object.__setattr__(node, "children", tuple(kids))  # each child set once, while the tree is built, never after
                except _Stop:
                    self.stack.append(node)  # its solved children kept: resumed here
                    raise
                self.stack.extend(node.children)
        except _Better as better:
            self.closed, self.reason = True, "an integer point below the target"
            return TreeProof(None, self.solved, better.point)
        except _Stop as stop:
            self.reason = str(stop)
            return TreeProof(None, self.solved, self.met, reason=str(stop), paused=None if self.closed else self)
        self.closed = True
        if not check:  # a job's subtree (rebalproof.solver.tree_share): the grafted tree is checked whole
            return TreeProof(self.root, self.solved, self.met, target=self.target)
        return TreeProof(self.root if check_tree(self.model, self.target, self.root) else None, self.solved, self.met, target=self.target)

    def _shared(self, deadline_end, max_nodes) -> None:
        """The open subtrees as jobs (:mod:`rebalproof.solver.tree_share`), searched here and by a helper where a core is spare, grafted in place.

        Jobs are the open children below the nodes on the stack. Each is searched from its parent's LP basis
        for at most :data:`~rebalproof.solver.tree_share.CHUNK` nodes, for the target of the job
        it came from; the open nodes of a job that stops there are jobs again (named by the job's
        name and their place), so what each job answers, and the tree, do not depend on where or
        when jobs ran. With ``improve`` the target drops to the least a job met (its point kept;
        ties: the first job by name). Stopped by time or nodes, what the jobs built stays in
        place, open nodes (:class:`_Pending`) in it, and their nodes go back on the stack; a job
        that closed (nothing to branch on, a point below the target without ``improve``) closes
        the search as it would have here.
        """
        from rebalproof.solver.tree_share import CHUNK, HELPER_AFTER, Helper, Runner, can_share

        lock = threading.Condition()
        queue: list = []  # a heap of (name, node, slot, target): taken in name order (names are unique)
        busy = [0]  # jobs being searched
        halted = []  # (name, reason): a job closed the search, or time or nodes ran out
        least: list = []  # (target, name, point) of jobs that met a point

        def slots_below(node):
            found, walk = [], [node]
            while walk:
                here = walk.pop()
                for k in reversed(range(len(here.children))):
                    child = here.children[k]
                    if isinstance(child, _Pending):
                        found.append((here, k))
                    else:
                        walk.append(child)
            return found[::-1]

        seen: set = set()
        for top in self.stack:
            for node, slot in slots_below(top):
                if (id(node), slot) not in seen:
                    seen.add((id(node), slot))
                    queue.append(((len(seen),), node, slot, self.target))  # in name order: already a heap

        def take():
            with lock:
                while not queue and busy[0] and not halted:
                    lock.wait()
                if halted or not queue:
                    return None
                busy[0] += 1
                name, node, slot, target = heapq.heappop(queue)
                child = node.children[slot]
                return name, node, slot, (child.lower, child.upper, target, child.basis)

        def finish(job, answer) -> None:
            name, node, slot, _ = job
            with lock:
                busy[0] -= 1
                self.solved += answer.solved
                if answer.root is not None:
                    kids = list(node.children)
                    kids[slot] = answer.root
                    object.__setattr__(node, "children", tuple(kids))
                if answer.met is not None:
                    least.append((answer.target, name, answer.met))
                if answer.closed:
                    halted.append((name, answer))
                elif answer.stopped:
                    out_of_budget = self.solved >= max_nodes or (deadline_end is not None and time.monotonic() >= deadline_end)
                    if out_of_budget or answer.solved < CHUNK:
                        halted.append((name, answer))
                    else:
                        below = [(node, slot)] if answer.root is None else slots_below(answer.root)
                        for i, (parent, k) in enumerate(below):
                            heapq.heappush(queue, (name + (i,), parent, k, answer.target))
                lock.notify_all()

        helper: list = []  # the helper, once started
        begun = time.monotonic()

        def want_helper() -> None:
            """A helper once the jobs have run :data:`HELPER_AFTER` seconds with more queued and a core spare (a short search never starts one)."""
            if self._helper_tried or time.monotonic() - begun < HELPER_AFTER:
                return
            with lock:
                if not queue or halted:
                    return
            self._helper_tried = True
            if not can_share():
                return
            try:
                helper.append(Helper(self.model, choices=self.choices, strong=self.strong, improve=self.improve))
            except OSError:
                return
            helper[0].start(lambda: work(helper[0].job))

        def work(run_job, here: bool = False) -> None:
            while True:
                if here and not helper:
                    want_helper()
                job = take()
                if job is None:
                    return
                name, node, slot, bounds = job

                def give_back() -> None:
                    with lock:
                        busy[0] -= 1
                        heapq.heappush(queue, (name, node, slot, bounds[2]))
                        lock.notify_all()

                try:
                    answer = run_job(*bounds, deadline_end, CHUNK)
                except BaseException:
                    give_back()
                    raise
                if answer is None:  # the helper is gone: the job back for this process
                    give_back()
                    return
                finish((name, node, slot, bounds[2]), answer)

        if self._runner is None:  # an LP of its own, set up as the helper's
            self._runner = Runner(self.model, choices=self.choices, strong=self.strong, improve=self.improve, parts=(self.exact, self.phase1))
        try:
            work(self._runner.job, here=True)
            if helper:
                helper[0].join()
            work(self._runner.job)  # what the helper left, had it died
        finally:
            if helper:
                helper[0].close()
        if least:
            target, _, point = min(least, key=lambda m: (m[0], m[1]))
            if target < self.target:
                self.met, self.target = point, target
        self.stack = []
        if halted:
            name, answer = min(halted, key=lambda h: h[0])
            if answer.closed:
                self.closed, self.reason = True, answer.closed
                if answer.better is not None:
                    raise _Better(answer.better)
                raise _Stop(answer.closed)
            self.stack = [self.root]  # its open nodes are found from the root when the search goes on
            raise _Stop(answer.stopped)

    def _expand(self, lower, upper, deadline_end, max_nodes):
        model, exact, lp, target = self.model, self.exact, self.lp, self.target
        if any(lo > hi for lo, hi in zip(lower, upper)):
            return Node(())
        seconds = None if deadline_end is None else deadline_end - time.monotonic()
        if (seconds is not None and seconds <= 0) or self.solved >= max_nodes:
            raise _Stop("out of time or nodes")
        answer = lp.solve(lower, upper, seconds)
        if answer is None:
            raise _Stop("HiGHS gave no answer")
        self.solved += 1
        feasible, multipliers, point = answer
        if not feasible:  # no point at all: the dual ray (either sign), else the phase-one LP's multipliers, scaled past the target
            rays = [multipliers, tuple((i, -v) for i, v in multipliers)]
            for ray in _rays(rays, lp, lower, upper, deadline_end):
                least, _ = self.phase1.bound(ray, lower, upper)
                if least > 0:
                    floor = sum(min(c * lower[j], c * upper[j]) for j, c in model.objective.items())
                    t = max(1, math.floor((target - floor) / least) + 1)
                    return Node(tuple((i, t * v) for i, v in ray))
            self.closed = True
            raise _Stop("no multipliers proved an empty node empty")
        bound, r = exact.bound(multipliers, lower, upper)
        if bound > target - 1:
            return Node(multipliers)
        lower, upper = exact.fixed(r, bound, target - 1, lower, upper)
        if any(lo > hi for lo, hi in zip(lower, upper)):
            return Node(multipliers)
        branch = None
        if self.strong:
            cands = _candidates(model, self.choices, point, lower, upper)[: self.strong]
            scored, basis = [], lp.basis()
            for cand in cands:
                gains = []
                for lo, hi in _children(model, cand, lower, upper):
                    seconds = None if deadline_end is None else deadline_end - time.monotonic()
                    if seconds is not None and seconds <= 0:
                        raise _Stop("out of time or nodes")
                    gains.append(lp.probe(lo, hi, seconds) - float(bound))
                    lp.restore(basis)
                scored.append((max(gains[0], 1e-3) * max(gains[1], 1e-3), cand))
            if scored:
                branch = max(scored, key=lambda sc: sc[0])[1]
        if branch is None:
            branch = _branch(model, self.choices, point, lower, upper)
        if branch is None:
            whole = _whole_point(model, point)
            if whole is not None and model.value(whole) < target:
                if not self.improve:
                    raise _Better(whole)
                self.met, self.target = whole, model.value(whole)
                return Node(multipliers)  # its LP's least is the point's value: a leaf for the lowered target
            self.closed = True
            raise _Stop("nothing to branch on below the target")
        start = lp.compact_basis(basis if self.strong else None)  # its children, when jobs, start from it (after probing, restored to it)
        return Node(multipliers, branch, tuple(_Pending(lo, hi, start) for lo, hi in _children(model, branch, lower, upper)))


def _whole_point(model: Linear, point) -> tuple | None:
    """The LP's ``point`` with every variable rounded, when that keeps every bound and row (a point of the model), else None.

    Variables that are not integer are rounded too: in the box-choice model they are sums of
    whole options (a box's bounds), whole wherever the picks are; a point is only taken once
    :meth:`Linear.keeps` accepts it in exact arithmetic.
    """
    whole = tuple(round(v) for v in point)
    if any(abs(w - v) > 1e-6 for w, v in zip(whole, point)):
        return None
    return whole if model.keeps(whole) else None


def _rays(rays, lp: _NodeLP, lower, upper, deadline_end):
    """The given rays, then the phase-one LP's multipliers (HiGHS's ray, rounded, can miss on rows with large coefficients)."""
    yield from rays
    if lp.phase_one is None:
        lp.phase_one = _NodeLP(lp.model, elastic=True)
    seconds = None if deadline_end is None else deadline_end - time.monotonic()
    answer = lp.phase_one.solve(lower, upper, seconds)
    if answer is not None:
        yield answer[1]


def _without_objective(model: Linear) -> Linear:
    bare = copy.copy(model)
    bare.objective = {}
    return bare


@dataclass(frozen=True)
class _Pending:
    lower: list
    upper: list
    basis: tuple | None = None  # the parent's LP basis (:meth:`_NodeLP.compact_basis`): a job starts warm from it


class _Stop(Exception):
    pass


class _Better(Exception):
    def __init__(self, point):
        super().__init__("an integer point below the target")
        self.point = point


def dive(model: Linear, choices, *, deadline_end: float | None = None) -> list[float] | None:
    """An LP point with every choice row's pick whole, by diving (a heuristic for layouts, not a proof): None if none is found in time.

    Repeatedly: solve the LP, fix every group it already picks whole, and pick for the most decided
    fractional group the option the LP weighs most (the others' upper bounds 0). When that leaves no
    point, that option is forbidden instead and the dive goes on. With every group's option fixed
    what remains of the box-choice model is a flow within boxes, which the caller solves.
    """
    try:
        lp = _NodeLP(model)
    except ImportError:
        return None
    lower, upper = list(model.lower), list(model.upper)
    last, saved = None, {}
    while True:
        seconds = None if deadline_end is None else deadline_end - time.monotonic()
        if seconds is not None and seconds <= 0:
            return None
        answer = lp.solve(lower, upper, seconds)
        if answer is None:
            return None
        feasible, _, point = answer
        if not feasible:
            if last is None:
                return None
            group, pick = last
            for j in group:
                upper[j] = saved[j]
            upper[pick] = 0
            last = None
            continue
        open_groups = []
        for _, order in choices:
            live = [j for j in order if upper[j] > 0]
            top = max(live, key=lambda j: (point[j], -order.index(j)))
            if len(live) > 1:
                open_groups.append((point[top], order, top))
        fractional = [g for g in open_groups if g[0] < 1 - 1e-6]
        if not fractional:
            return point
        for _, order, top in open_groups:  # the groups the LP already picks whole are fixed so at once: the point keeps every row
            if (_, order, top) not in fractional:
                for j in order:
                    if j != top:
                        upper[j] = 0
        weight, order, top = max(fractional, key=lambda g: g[0])
        saved = {j: upper[j] for j in order}
        for j in order:
            if j != top:
                upper[j] = 0
        last = (order, top)
