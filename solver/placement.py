"""The active-placement problem: the structure that makes the optimum fast to find and prove.

Every objective but ``restore`` and ``warmups`` depends on the actives alone, and those two
reduce to the actives too (proof below), so the optimiser only has to place actives:

- *standbys*: a task's ``r`` required standbys go to eligible members other than its active;
  nothing else bounds them, so the least number of cold copies of task ``t`` is
  ``max(0, r + 1 - k_t)`` (``k_t``: eligible members caught up on ``t``) when its active is
  caught up, and one more when the active is cold *and* ``r < k_t`` (a caught-up member is
  left over). So ``restore = const + #cold actives of tasks with r < k_t`` at best, reached by
  giving standbys to caught-up members first.
- *warmups* only add copies and never help an earlier objective: 0 at the optimum.

Tasks with the same subtopology, allowed hosts and cold-penalty profile form a *class* of
interchangeable tasks; a class is placed by counts, and the moves of a class are its owned
tasks minus those kept on their owner (at most ``min(x_m, owned_m)`` on each member ``m``).

Balance of one group (all tasks, or one subtopology's) with capacities: ``imbalance <= K``
iff some level ``lam`` has ``ceil(lam*c_m) - K <= n_m <= floor(lam*c_m)`` for every staying
member. The least top load ``Lam`` is found with upper-bound flows (every assignment has a
member at ``Lam`` or above: a Hall violator certifies ``Lam - 1 step`` infeasible); the least
``K`` with lower bounds ``ceil(Lam*c_m) - K`` met is found with lower-bound flows (a deficient
member set certifies ``K - 1``; larger levels only raise lower bounds). The boxes of the optimal
set are those levels ``lam >= Lam`` whose lower bounds can still be met; with equal capacities
there is exactly one.

With one box per group, the optimal set of ``imbalance`` and ``spread`` is the set of flows
through (subtopology, member) slots within the boxes, and ``moves``/``restore`` is a min-cost
flow over it (cost ``W * moved + cold``, ``W`` above any cold count), proven by potentials.

With equal capacities every layout of least imbalance lies in the one instance box: the load
vectors of a bipartite assignment are M-convex, so a layout above the least top load could be
exchanged, unit by unit, into one below it with a smaller imbalance. So when the subtopology
floors do not meet inside that box, the (task, member) pairs no flow within the instance box
uses are dropped first (:func:`rebalproof.solver.flow.unusable_arcs`, certified by residual
ranks of one flow) and the floors recomputed -- on the benchmark inputs this alone makes them
meet. If they still do not, :mod:`rebalproof.solver.benders` searches the per-subtopology boxes
(Z3 or CP-SAT master, flow judges). Tiny inputs are enumerated (:mod:`rebalproof.solver.exhaustive`).

Under the ``learner`` rules, a view where ``learners-kept`` judges some task (a learner still
restoring a task its owner may keep) has that rule make a copy follow where an active stays,
which the flow's costs (moves, cold actives) do not count. The rule moves no active, so the
actives' objectives are solved as above without it, and the staged Z3 search
(:mod:`rebalproof.solver.staged`) takes the copies from that answer with its learners kept
(:func:`keep_learners`).

With unequal capacities a group has several boxes (one per level ``lam``), and a leaving
member that may keep an active is a host without bounds (balance counts the staying members
only; the ``leaving`` rule decides what it may keep). Both go to the box-choice model
(:mod:`rebalproof.solver.choice`): each group (the instance group at its proven least
imbalance, each subtopology) picks one (level, width) option; the LP relaxation's multipliers,
checked by exact arithmetic, bound the spread and then the cost, a flow within the boxes the LP
weighs most or SCIP on the same model gives the layouts, and a min-cost flow within a layout's
own boxes (potentials checked) its moves and restore. When no layout of least imbalance is
known yet (the model's options need a spread to stay below), the Benders search over levels and
widths serves (:class:`rebalproof.solver.benders.LevelMaster`). The deadline is checked between
stages; at a timeout the answer is the best found (at least the greedy start,
:mod:`rebalproof.solver.incumbent`) with the bounds proven so far.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from fractions import Fraction


from rebalproof.model.assignment import ROLES, Assignment
from rebalproof.model.balance import is_balanced
from rebalproof.model.names import id_key, sorted_ids, subtopology_of
from rebalproof.model.ranking import rank
from rebalproof.model.view import RebalanceInput
from rebalproof.solver.benders import LevelMaster, search_boxes, search_levels
from rebalproof.solver.choice import ChoiceSearch, own_options, search_choices
from rebalproof.solver.exhaustive import LIMIT, layouts, least_layout
from rebalproof.solver.incumbent import Incumbent
from rebalproof.solver.flow import bounded_min_cost, fills_over, fits_under, quick_cut, unusable_arcs
from rebalproof.solver.objectives import OBJECTIVES, evaluate, imbalance
from rebalproof.solver.result import INCONCLUSIVE, INFEASIBLE, OPTIMAL, Bound, Optimum
from rebalproof.solver.rules import Facts, violations
from rebalproof.solver.staged import Deadline, solve_staged

__all__ = ["solve_placement", "GroupBalance", "analyse_group", "place_standbys"]


# --------------------------------------------------------------------------- balance of one group
@dataclass(frozen=True)
class GroupBalance:
    """The least imbalance of one group and the boxes of the layouts reaching it.

    ``boxes`` is a list of ``{member: (lo, hi)}``; ``proof`` says why ``least - 1`` is impossible
    (empty when ``least`` is 0); ``exact`` is False when more boxes might exist than were listed.
    """

    least: int
    top: Fraction
    boxes: tuple
    proof: str
    exact: bool = True


#: Why the current assignment is optimal where ``fixpoint`` pins it: every copy, or the actives
#: (then no replica move lowers restore or warmups: the premise puts no replica on a member ranked
#: worse than one holding no copy, and finds no extra copy)
_FIXPOINT_PROOF = {
    True: "the fixpoint rule allows only the current assignment",
    False: "the fixpoint rule pins the actives; no replica move lowers restore or warmups",
}


def lam_text(lam: Fraction) -> str:
    """A level as people write it: ``5/4``, ``2``."""
    return f"{lam}" if lam.denominator != 1 else f"{lam.numerator}"


def analyse_group(classes, caps: dict[str, int], *, name: str, max_boxes: int = 8) -> GroupBalance:
    """The least imbalance of placing ``classes`` ((q, hosts) with hosts among ``caps``' members).

    Hosts not in ``caps`` are leaving members: they may take any number and are not counted,
    so their room is unbounded and the top load may be as low as 0.
    """
    members = sorted_ids(caps)
    free = sorted_ids({m for _, hosts in classes for m in hosts if m not in caps})
    total = sum(q for q, _ in classes)
    if total == 0:
        return GroupBalance(least=0, top=Fraction(0), boxes=({m: (0, 0) for m in members},), proof="")
    if len(members) == 1:
        lowest = 0 if free else total
        return GroupBalance(least=0, top=Fraction(lowest, caps[members[0]]), boxes=({members[0]: (lowest, total)},), proof="", exact=not free)

    def hi_at(lam: Fraction) -> dict:
        return {m: math.floor(lam * caps[m]) for m in members} | {m: total for m in free}

    # least top load: per distinct capacity c, the least a with level a/c feasible
    top = None
    for c in sorted(set(caps.values())):
        lo_a, hi_a = (0 if free else math.ceil(Fraction(total * c, sum(caps.values())))), total * c
        while lo_a < hi_a:
            mid = (lo_a + hi_a) // 2
            if fits_under(classes, hi_at(Fraction(mid, c))).ok:
                hi_a = mid
            else:
                lo_a = mid + 1
        level = Fraction(lo_a, c)
        top = level if top is None else min(top, level)
    below = {m: math.ceil(top * caps[m]) - 1 for m in members} | {m: total for m in free}
    upper_cut = fits_under(classes, below) if top > 0 else None
    if upper_cut is not None and upper_cut.ok:
        raise AssertionError("least top load is not least")

    def lo_at(lam: Fraction, k: int) -> dict:
        return {m: math.ceil(lam * caps[m]) - k for m in members}

    lo_k, hi_k = 0, max(math.ceil(top * caps[m]) for m in members)
    while lo_k < hi_k:
        mid = (lo_k + hi_k) // 2
        if fills_over(classes, lo_at(top, mid)).ok:
            hi_k = mid
        else:
            lo_k = mid + 1
    least = lo_k
    proof = ""
    if least > 0:
        lower_cut = fills_over(classes, lo_at(top, least - 1))
        load = f"{top}" if top.denominator != 1 else f"{top.numerator}"
        proof = (
            f"{name} <= {least - 1} is infeasible: no layout keeps every member below {load} per thread "
            f"({upper_cut.say()} below it), and at level {load} or above {name} <= {least - 1} needs each member m "
            f"to get at least ceil({load}*c_m) - {least - 1} ({lower_cut.say()})"
        )
    lam = top
    if least == 0 and any((top * caps[m]).denominator != 1 for m in members):
        # imbalance 0 puts every member at exactly lam*c_m, so lam*c_m is whole for every m: lam is a
        # multiple of 1/g (g the capacities' gcd). Only leaving hosts (free) make the total on the
        # staying members vary, so the first such level above the least top load may still fail;
        # higher levels only raise what each member must get.
        g = math.gcd(*caps.values())
        lam = Fraction(math.ceil(top * g), g)
        exact_at = {m: int(lam * caps[m]) for m in members}
        short = fills_over(classes, exact_at)
        over = fits_under(classes, exact_at | {m: total for m in free})
        if not (short.ok and over.ok):
            least, lam = 1, top
            load = f"{top}" if top.denominator != 1 else f"{top.numerator}"
            level = f"{lam_text(Fraction(math.ceil(top * g), g))}"
            cut = short if not short.ok else over
            proof = (f"{name} <= 0 is infeasible: it puts each member m at exactly L*c_m for one level L, so L is a multiple of 1/{g} "
                     f"and at least the least top load {load}; at the first such level {level} {cut.say()}, and higher levels only ask more of every member")
    # boxes: levels from lam upwards while the lower bounds can still be met
    boxes, exact = [], True
    while True:
        box = {m: (max(0, math.ceil(lam * caps[m]) - least), math.floor(lam * caps[m])) for m in members}
        boxes.append(box)
        nxt = min(Fraction(math.floor(lam * caps[m]) + 1, caps[m]) for m in members)
        if (len(set(caps.values())) == 1 and not free) or not fills_over(classes, lo_at(nxt, least)).ok:
            break
        if len(boxes) >= max_boxes:
            exact = False
            break
        lam = nxt
    return GroupBalance(least=least, top=top, boxes=tuple(boxes), proof=proof, exact=exact)


# --------------------------------------------------------------------------- the problem
@dataclass
class _Class:
    key: tuple
    sub: str
    hosts: tuple
    cold: frozenset  # hosts where an active adds 1 to restore
    owned: bool
    tasks: list = field(default_factory=list)
    owners: dict = field(default_factory=dict)  # owner -> count of tasks owned there (owner among hosts)


class _Problem:
    def __init__(self, view: RebalanceInput, facts: Facts, *, hosts: dict | None = None):
        self.view, self.facts = view, facts
        hosts_of = hosts
        self.staying = facts.staying
        self.caps = {m: view.member(m).capacity for m in self.staying}
        staying = set(self.staying)
        self.penalty: dict[str, frozenset] = {}
        self.const_restore = 0
        for t in view.tasks:
            if not t.stateful:
                self.penalty[t.id] = frozenset()
                continue
            k = len(facts.caught_up[t.id])
            self.const_restore += max(0, facts.required + 1 - k)
            cold = frozenset(m for m in facts.active_hosts[t.id] if m not in facts.caught_up[t.id]) if facts.required < k else frozenset()
            self.penalty[t.id] = cold
        self.classes: dict[tuple, _Class] = {}
        self.leaving: set = set()  # leaving members some active may stay on (unbounded, not counted by balance)
        for t in view.task_ids:
            hosts = facts.active_hosts[t] if hosts_of is None else hosts_of[t]
            self.leaving.update(m for m in hosts if m not in staying)
            owner = facts.owner.get(t)
            key = (subtopology_of(t), hosts, self.penalty[t], owner is not None)
            cls = self.classes.get(key)
            if cls is None:
                cls = self.classes[key] = _Class(key=key, sub=key[0], hosts=hosts, cold=key[2], owned=key[3])
            cls.tasks.append(t)
            if owner is not None and owner in hosts:
                cls.owners[owner] = cls.owners.get(owner, 0) + 1
        self.weight = sum(1 for t in view.tasks if t.stateful) + 1  # W: above any count of cold actives
        self.subs = sorted_ids({c.sub for c in self.classes.values()})

    def balance_classes(self, sub: str | None = None):
        """(q, hosts) per hosts-set of the tasks balance may count (some host staying), of one subtopology or all.

        Hosts may include leaving members: a task kept there is not counted (balance is over
        the staying members), so a leaving host is a place without bounds.
        """
        merged: dict[tuple, int] = defaultdict(int)
        for c in self.classes.values():
            if (sub is None or c.sub == sub) and any(m in self.caps for m in c.hosts):
                merged[c.hosts] += len(c.tasks)
        return [(q, hosts) for hosts, q in sorted(merged.items())]

    def decode(self, counts: dict, kept: dict) -> dict[str, str]:
        """Task -> member from per-class counts and per-class kept-on-owner counts."""
        host = {}
        for key, cls in self.classes.items():
            slots = dict(counts.get(key, {}))
            kept_here = dict(kept.get(key, {}))
            rest = []
            for t in cls.tasks:
                owner = self.facts.owner.get(t)
                if owner is not None and kept_here.get(owner, 0) > 0:
                    host[t] = owner
                    kept_here[owner] -= 1
                    slots[owner] -= 1
                else:
                    rest.append(t)
            free = [m for m in sorted(slots, key=id_key) for _ in range(slots[m])]
            if len(free) != len(rest) or any(v < 0 for v in slots.values()):
                raise AssertionError("placement counts do not add up")
            host.update(zip(rest, free))
        return host


# --------------------------------------------------------------------------- standbys and the answer
def place_standbys(view: RebalanceInput, facts: Facts, host: dict[str, str]) -> Assignment:
    """The answer for actives ``host``: standbys on caught-up members first, then least loaded.

    Each stateful task gets exactly the required standbys, on eligible members other than its
    active: caught-up ones first (this reaches the least ``restore``), then the least loaded
    (actives plus standbys per thread), ties by rank and id. No warmups. Under ``ha`` the answer
    asks for a probing rebalance exactly when it is not balanced.
    """
    roles = {m: {r: [] for r in ROLES} for m in view.member_ids}
    load = {m: 0 for m in view.member_ids}
    for t, m in host.items():
        roles[m]["active"].append(t)
        load[m] += 1
    cap = {m: view.member(m).capacity for m in view.member_ids}
    for t in view.stateful_task_ids:
        if not facts.required:
            break
        options = [m for m in facts.eligible[t] if m != host[t]]
        # load / cap as a float orders exactly as the fraction does: distinct fractions of small
        # integers differ by at least 1/(c*c') > their rounding error, and equal ones round alike
        options.sort(key=lambda m: (m not in facts.caught_up[t], m in facts.treat_leaving, load[m] / cap[m], rank(view, m, t), id_key(m)))
        for m in options[: facts.required]:
            roles[m]["standby"].append(t)
            load[m] += 1
    answer = Assignment.build(roles)
    if facts.rules.probing and not is_balanced(view, answer):
        answer = Assignment.build(roles, probing_rebalance=True)
    return answer


# --------------------------------------------------------------------------- the engine
def _stage3_network(prob: _Problem, inst_box: dict | None, sub_boxes: dict):
    """Arcs and supplies: class -> (stay ->) (subtopology, member) slot -> member -> sink, within the boxes."""
    arcs, supplies = [], {}
    inst_box = inst_box or {}
    w = prob.weight
    for key, cls in prob.classes.items():
        node = ("class", key)
        supplies[node] = len(cls.tasks)
        for m in cls.hosts:
            arcs.append((node, ("slot", cls.sub, m), 0, None, (w if cls.owned else 0) + (1 if m in cls.cold else 0)))
        for o, n in cls.owners.items():
            stay = ("stay", key, o)
            arcs.append((node, stay, 0, n, 1 if o in cls.cold else 0))
            arcs.append((stay, ("slot", cls.sub, o), 0, None, 0))
    slots = {(cls.sub, m) for cls in prob.classes.values() for m in cls.hosts}
    for sub, m in sorted(slots, key=lambda p: (id_key(p[0]), id_key(p[1]))):
        lo, hi = sub_boxes.get(sub, {}).get(m, (0, None))
        arcs.append((("slot", sub, m), ("member", m), lo, hi, 0))
    for m in sorted_ids({m for _, m in slots} | set(inst_box)):
        lo, hi = inst_box.get(m, (0, None))
        arcs.append((("member", m), "sink", lo, hi, 0))
    supplies["sink"] = -sum(supplies.values())
    return arcs, supplies


def _soft_layout(prob: _Problem, inst_box: dict, sub_boxes: dict):
    """A layout near every subtopology's box (a primal guess, no claim): the instance box kept, sub boxes made soft.

    Each slot arc becomes three: up to the box's lower bound rewarded, up to its upper bound
    free, beyond it charged, each unit of box violation ``B`` above any ``W*moves + cold``. One
    min-cost flow then misses the boxes by as few units as it can, moves as little as it can
    next. The layout is judged only by what :func:`rebalproof.solver.objectives.evaluate` scores.
    Returns the host map or None (no flow within the instance box).
    """
    arcs, supplies = _stage3_network(prob, inst_box, {})
    tasks = sum(len(c.tasks) for c in prob.classes.values())
    big = prob.weight * (tasks + 1) + tasks + 1
    soft = []
    for u, v, lo, hi, cost in arcs:
        if isinstance(u, tuple) and u[0] == "slot" and u[1] in sub_boxes and v[1] in sub_boxes[u[1]]:
            want, room = sub_boxes[u[1]][v[1]]
            soft += [(u, ("soft", u[1], v[1], k), 0, cap, c) for k, cap, c in ((0, want, -big), (1, max(0, room - want), 0), (2, None, big))]
            soft += [(("soft", u[1], v[1], k), v, 0, None, 0) for k in range(3)]
        else:
            soft.append((u, v, lo, hi, cost))
    solution = bounded_min_cost(soft, supplies)
    if solution is None:
        return None
    return _decode_flow(prob, solution)


def _decode_flow(prob: _Problem, solution):
    """The host of every task from a stage-3 flow: per class, units sent to each slot or kept."""
    counts, kept = defaultdict(dict), defaultdict(dict)
    for key, cls in prob.classes.items():
        for m in cls.hosts:
            counts[key][m] = solution.flow[(("class", key), ("slot", cls.sub, m))]
        for o in cls.owners:
            f = solution.flow[(("class", key), ("stay", key, o))]
            counts[key][o] = counts[key].get(o, 0) + f
            kept[key][o] = f
    return prob.decode(counts, kept)


def _flow_stage3(prob: _Problem, inst_box: dict | None, sub_boxes: dict):
    """Min-cost flow of moves then cold actives within the boxes: (host, moves, cold, solution), or None."""
    w = prob.weight
    arcs, supplies = _stage3_network(prob, inst_box, sub_boxes)
    if quick_cut(arcs, supplies) is not None:
        return None
    solution = bounded_min_cost(arcs, supplies)
    if solution is None:
        return None
    host = _decode_flow(prob, solution)
    moves = sum(1 for t, o in prob.facts.owner.items() if host[t] != o)
    cold = sum(1 for t, m in host.items() if m in prob.penalty[t])
    if solution.cost != w * moves + cold:
        raise AssertionError("decoded layout does not cost what the flow does")
    return host, moves, cold, solution


def solve_placement(view: RebalanceInput, rules: str, *, timeout: float | None = None, facts: Facts | None = None, small: int = LIMIT) -> Optimum:
    """The lexicographic optimum by flow where flow suffices and Z3 (count model) for the rest.

    Inputs with at most ``small`` layouts of the actives are enumerated instead
    (:mod:`rebalproof.solver.exhaustive`); ``small=0`` always takes the flow path.
    """
    started = time.monotonic()
    deadline = Deadline(timeout)
    facts = facts or Facts(view, rules)
    notes: list[str] = []

    def finish(status, answer, bounds, reason="", engine="flow"):
        return Optimum(status=status, rules=facts.rules.name, assignment=answer, objectives=tuple(bounds), reason=reason, engine=engine, seconds=time.monotonic() - started, notes=tuple(notes))

    empty = [t for t, hosts in facts.active_hosts.items() if not hosts]
    if empty:
        return finish(INFEASIBLE, None, [Bound(n, None, 0, "none", "") for n in OBJECTIVES], f"no member may hold the active of {', '.join(empty[:5])}{' and more' if len(empty) > 5 else ''}: one-active with leaving/caught-up-active", "flow")
    current = facts.fixpoint_current
    if current is not None:
        values = evaluate(view, current, facts).as_dict()
        return finish(OPTIMAL, current, [Bound(n, values[n], values[n], "fixpoint", _FIXPOINT_PROOF[facts.fixpoint_pins_copies]) for n in OBJECTIVES], engine="fixpoint")

    if facts.kept_learners:
        return _keeping_learners(view, facts, deadline, small)
    prob = _Problem(view, facts)
    if layouts(facts) <= small:
        return _exhaustive(view, facts, prob, finish)
    incumbent = Incumbent(view, facts)  # an answer from the first second (anytime)
    bounds: dict[str, tuple[int, str, str]] = {}  # name -> (lower, method, proof)
    engine = "flow"
    stage3 = None
    inst = analyse_group(prob.balance_classes(), prob.caps, name="imbalance")
    bounds["imbalance"] = (inst.least, "flow-cut" if inst.least else "arithmetic", inst.proof or "imbalance is at least 0")
    one_box = len(inst.boxes) == 1 and inst.exact

    def analyse_subs(prob):
        subs = {s: analyse_group(prob.balance_classes(s), prob.caps, name=f"spread of subtopology {s}") for s in prob.subs}
        lb = sum(g.least for g in subs.values())
        proofs = [g.proof for g in subs.values() if g.proof]
        pruning = f" (with the {dropped} task-member pairs no layout within the instance box can use left out)" if dropped else ""
        return subs, lb, (lb, "flow-cut" if lb else "arithmetic", ("; ".join(proofs) or "spread is at least 0") + (pruning if lb else ""))

    dropped = 0
    subs, lb, bounds["spread"] = analyse_subs(prob)
    single = one_box and all(len(g.boxes) == 1 and g.exact for g in subs.values())
    if single:
        stage3 = _flow_stage3(prob, inst.boxes[0], {s: g.boxes[0] for s, g in subs.items()})
    if one_box and stage3 is None and not deadline.passed:
        pruned = _prune(prob, inst)
        if pruned is not None:
            prob, dropped = pruned
            notes.append(f"{dropped} task-member pairs no layout within the instance box can use (residual-graph ranks of one flow, checked arc by arc) are left out")
            subs, lb, bounds["spread"] = analyse_subs(prob)
            single = all(len(g.boxes) == 1 and g.exact for g in subs.values())
            if single:
                stage3 = _flow_stage3(prob, inst.boxes[0], {s: g.boxes[0] for s, g in subs.items()})
    if stage3 is None and not deadline.passed:  # a good layout before the search (anytime), each instance box tried
        for box in inst.boxes:
            guess = _soft_layout(prob, box, {s: g.boxes[0] for s, g in subs.items()})
            if guess is not None and incumbent.offer(place_standbys(view, facts, guess), "flow with soft boxes"):
                note = f"a flow with soft subtopology boxes finds spread {incumbent.values.spread} (the floors sum to {lb})"
                notes[:] = [n for n in notes if not n.startswith("a flow with soft subtopology boxes")] + [note]
            if deadline.passed:
                break
    if stage3 is None:
        if deadline.passed:
            return _timed_out(view, facts, prob, inst, bounds, None, finish, incumbent)
        levels = not (one_box and len(set(prob.caps.values())) == 1 and not prob.leaving)
        why = "some group has several boxes (unequal capacities or leaving members)" if not single else f"the spread bound {lb} is not reachable together with imbalance {inst.least}"
        upper = incumbent.values.spread if incumbent.values is not None and incumbent.values.imbalance == inst.least else None
        if levels and upper is not None:
            searched = _search_choices(prob, inst, subs, deadline, upper)
            notes.append(f"{why}: the box-choice model (one (level, width) option per group; LP multipliers checked by arithmetic, layouts by SCIP): "
                         + ", ".join(f"{what} {seconds:.1f} s" for what, seconds in searched.solves))
            if not searched.done:
                return _timed_out(view, facts, prob, inst, bounds, searched, finish, incumbent)
            stage3, engine = searched.best, "flow+choice"
            bounds["spread"] = (searched.spread, searched.spread_method, searched.spread_proof) if searched.spread > lb else bounds["spread"]
        else:
            searched = _search_levels(prob, inst, subs, deadline, incumbent) if levels else _search_boxes(prob, inst, subs, deadline)
            notes.append(
                f"{why}: Benders over per-subtopology {'levels and widths' if levels else 'boxes'} "
                f"({searched.flows} flows, {searched.feasibility_cuts} feasibility and {searched.optimality_cuts} optimality cuts, {searched.master_checks} {'CP-SAT' if levels else 'Z3'} master {'solves' if levels else 'checks'})"
            )
            if not searched.done:
                return _timed_out(view, facts, prob, inst, bounds, searched, finish, incumbent)
            stage3, engine = searched.best, "flow+benders"
            bounds["spread"] = _spread_bound(lb, searched, bounds["spread"][2])

    host, moves, cold, solution = stage3
    benders = engine == "flow+benders"
    union = " (the least over every box set of optimal spread, by Benders: the master over feasibility and potential cuts admits no box below it)" if benders else ""
    if engine == "flow+choice":
        method = searched.cost_method
        bounds["moves"] = (moves, method, f"min-cost flow of cost {prob.weight}*moves + cold actives within the own boxes of a layout of optimal spread (potentials checked), "
                                          f"{prob.weight * moves + cold}; no layout of optimal spread costs less: {searched.cost_proof}")
        bounds["restore"] = (prob.const_restore + cold, method, f"{prob.const_restore} cold cop{'y' if prob.const_restore == 1 else 'ies'} every layout has + {cold} cold active{'' if cold == 1 else 's'}, least by the same bound on {prob.weight}*moves + cold actives")
    else:
        bounds["moves"] = (moves, "benders" if benders else "flow-duals", f"min-cost flow{union} of cost {prob.weight}*moves + cold actives within the optimal boxes; node potentials give every residual arc a non-negative reduced cost, so no layout keeping imbalance and spread optimal moves fewer than {moves}")
        bounds["restore"] = (prob.const_restore + cold, "benders" if benders else "flow-duals", f"{prob.const_restore} cold cop{'y' if prob.const_restore == 1 else 'ies'} every layout has (tasks with fewer caught-up members than copies) + {cold} cold active{'' if cold == 1 else 's'}, least by the same potentials")
    bounds["warmups"] = (0, "arithmetic", "warmups is at least 0")
    answer = place_standbys(view, facts, host)
    broken = violations(view, answer, facts.rules, facts=facts)
    if broken:
        raise AssertionError(f"the optimal layout breaks {broken[0].name}: {broken[0].sentence}")
    out = _bounds(view, facts, answer, bounds)
    if not all(b.value == b.lower for b in out):
        raise AssertionError(f"objective values and proven bounds disagree: {[(b.name, b.value, b.lower) for b in out]}")
    return finish(OPTIMAL, answer, out, engine=engine)


def keep_learners(view: RebalanceInput, facts: Facts, answer: Assignment) -> Assignment:
    """``answer`` with a copy given back to a learner of each task ``learners-kept`` judges whose active stays with an owner and no learner kept.

    The learner most caught up (rank, then id) gets it, as a warmup: the copy moves no active,
    so no other rule of the learner set can break (it is on a staying member that held the task).
    """
    roles = {m: {r: list(getattr(answer.of(m), r)) for r in ROLES} for m in view.member_ids}
    for t, (owners, learners) in facts.kept_learners.items():
        if any(t in roles[o]["active"] for o in owners) and not any(t in sum(roles[m].values(), []) for m in learners):
            roles[min(learners, key=lambda m: (rank(view, m, t), id_key(m)))]["warmup"].append(t)
    return Assignment.build(roles, probing_rebalance=answer.probing_rebalance)


def _keeping_learners(view: RebalanceInput, facts: Facts, deadline: Deadline, small: int) -> Optimum:
    """Under ``learners-kept``: the actives by flow, the copies by the staged Z3 search from there.

    The rule adds copies and moves no active, so every answer of the rule set without it becomes
    one with it by giving learners their copies back (:func:`keep_learners`): ``imbalance``,
    ``spread`` and ``moves``, which count actives, have the same optimum, proven by flow. That
    answer, with its learners kept, starts the staged search for ``restore`` and ``warmups``,
    whose values the rule changes; a timeout answers with the best found, never with nothing.
    """
    free = Facts(view, replace(facts.rules, learners=False))
    base = solve_placement(view, free.rules, timeout=deadline.left(), facts=free, small=small)
    if base.assignment is None:
        return replace(base, rules=facts.rules.name)
    start = keep_learners(view, facts, base.assignment)
    actives = ("imbalance", "spread", "moves")
    known = []
    for b in base.objectives:
        if b.name not in actives or not b.proven:
            break
        known.append(replace(b, proof=f"{b.proof} (learners-kept adds copies and moves no active: the same optimum as without it)"))
    floors = {}
    after = base.objectives[len(known)] if len(known) < len(base.objectives) else None
    if len(known) == len(actives) and after is not None and after.unconditional and after.earlier_proven:
        # fewer answers (the rule's), the same optimum above: the relaxation's bound still holds
        floors[after.name] = (after.lower, after.method, f"{after.proof} (a bound without learners-kept, which only removes answers)")
    result = solve_staged(view, facts.rules.name, timeout=deadline.left(), facts=facts, start=start, known=tuple(known), floors=floors)
    return replace(result, engine=f"{base.engine}+z3-staged", notes=tuple(base.notes), seconds=base.seconds + result.seconds)


def _exhaustive(view, facts, prob: _Problem, finish):
    """Tiny inputs: the least of every layout of the actives (:mod:`rebalproof.solver.exhaustive`)."""
    host, key, count = least_layout(view, facts, penalty=prob.penalty)
    answer = place_standbys(view, facts, host)
    broken = violations(view, answer, facts.rules, facts=facts)
    if broken:
        raise AssertionError(f"the optimal layout breaks {broken[0].name}: {broken[0].sentence}")
    values = evaluate(view, answer, facts)
    if (values.imbalance, values.spread, values.moves, values.restore, values.warmups) != (*key[:3], prob.const_restore + key[3], 0):
        raise AssertionError("the enumerated layout does not score what its answer does")
    proof = (f"all {count} layouts of the actives the rules allow were scored (standbys on caught-up members first, "
             f"so restore is {prob.const_restore} + cold actives); none is lexicographically below this one")
    out = [Bound(n, v, v, "exhaustive", proof) for n, v in values.as_dict().items()]
    return finish(OPTIMAL, answer, out, engine="exhaustive")


def _prune(prob: _Problem, inst: GroupBalance):
    """The problem without the (class, member) arcs no flow within the instance box can use; None if none."""
    relaxed = _flow_stage3(prob, inst.boxes[0], {})
    if relaxed is None:
        return None
    arcs, _ = _stage3_network(prob, inst.boxes[0], {})
    dead = unusable_arcs(arcs, relaxed[3].flow)
    hosts, dropped = {}, 0
    for key, cls in prob.classes.items():
        node = ("class", key)
        keep = tuple(m for m in cls.hosts if (node, ("slot", cls.sub, m)) not in dead or (m in cls.owners and (node, ("stay", key, m)) not in dead))
        dropped += (len(cls.hosts) - len(keep)) * len(cls.tasks)
        for t in cls.tasks:
            hosts[t] = keep
    if not dropped:
        return None
    return _Problem(prob.view, prob.facts, hosts=hosts), dropped


def _search_boxes(prob: _Problem, inst: GroupBalance, subs: dict, deadline: Deadline):
    """Spread then moves/restore over per-subtopology boxes (:mod:`rebalproof.solver.benders`), equal capacities."""
    members = sorted_ids(prob.caps)
    reach: dict = defaultdict(set)
    totals: dict = defaultdict(int)
    for cls in prob.classes.values():
        if cls.hosts and all(m in prob.caps for m in cls.hosts):
            reach[cls.sub].update(cls.hosts)
            totals[cls.sub] += len(cls.tasks)
    floors = {}
    for s, g in subs.items():
        box = g.boxes[0]
        floors[s] = (max(hi for _, hi in box.values()), g.least)
    unreachable = {s for s in prob.subs if len(reach[s]) < len(members)}

    relaxed = _flow_stage3(prob, inst.boxes[0], {})
    return search_boxes(
        subs=prob.subs, floors=floors, members=members, totals=dict(totals), unreachable=unreachable,
        network=lambda box: _stage3_network(prob, inst.boxes[0], box),
        stage3=lambda box: _flow_stage3(prob, inst.boxes[0], box),
        spread_floor=sum(g.least for g in subs.values()), cost_floor=relaxed[3].cost if relaxed is not None else 0, deadline=deadline,
    )


def _relaxed(prob: _Problem, inst: GroupBalance):
    """Spread left free: (least cost ``W*moves + cold`` over every instance box or None when the boxes are not all listed, the cheapest layout).

    Computed once per problem and instance balance (the search and a timeout both ask).
    """
    memo = prob.__dict__.setdefault("_relaxed", {})
    if id(inst) not in memo:
        memo[id(inst)] = (inst, _relaxed_flows(prob, inst))
    return memo[id(inst)][1]


def _relaxed_flows(prob: _Problem, inst: GroupBalance):
    found = [f for f in (_flow_stage3(prob, box, {}) for box in inst.boxes) if f is not None]
    best = min(found, key=lambda f: f[3].cost) if found else None
    if not inst.exact:
        return None, best
    return (best[3].cost if best is not None else None), best


def _search_levels(prob: _Problem, inst: GroupBalance, subs: dict, deadline: Deadline, incumbent=None):
    """Spread then moves/restore over per-group levels and widths (:class:`rebalproof.solver.benders.LevelMaster`).

    Serves unequal capacities (several boxes per group) and leaving members (hosts without
    bounds); the instance box is chosen by the master too, its width fixed at the least imbalance.
    """
    members = sorted_ids(prob.caps)
    reach: dict = defaultdict(set)
    totals: dict = defaultdict(int)
    free: dict = defaultdict(bool)
    for cls in prob.classes.values():
        if any(m in prob.caps for m in cls.hosts):
            for g in (cls.sub, "(all)"):
                reach[g].update(m for m in cls.hosts if m in prob.caps)
                free[g] = free[g] or any(m not in prob.caps for m in cls.hosts)
            totals[cls.sub] += len(cls.tasks)
    unreachable = {g: [m for m in members if m not in reach[g]] for g in [*prob.subs, "(all)"]}
    floors = {s: (g.top, g.least) for s, g in subs.items()}
    tasks = sum(len(c.tasks) for c in prob.classes.values())
    master = LevelMaster(subs=prob.subs, floors=floors, caps={m: prob.caps[m] for m in members}, totals={s: totals[s] for s in prob.subs},
                         unreachable=unreachable, free=dict(free), instance=(inst.top, inst.least), cost_ceiling=prob.weight * (tasks + 1) + tasks)
    cost_floor, _ = _relaxed(prob, inst)
    def own():
        if incumbent is None or incumbent.values is None or incumbent.values.imbalance != inst.least:
            return None
        return _own_box(prob, incumbent, master.denominator)

    def split(box):
        return box["(all)"], {s: box[s] for s in prob.subs}

    def guess(box):
        """The soft-box layout near ``box`` (the instance box kept), offered to the incumbent."""
        if incumbent is None:
            return None
        layout = _soft_layout(prob, box["(all)"], {s: box[s] for s in prob.subs})
        if layout is None or not incumbent.offer(place_standbys(prob.view, prob.facts, layout), "flow with the master's soft boxes"):
            return None
        return own()

    return search_levels(
        master=master, members=members,
        network=lambda box: _stage3_network(prob, *split(box)),
        stage3=lambda box: _flow_stage3(prob, *split(box)),
        spread_floor=sum(g.least for g in subs.values()), cost_floor=cost_floor or 0, deadline=deadline, known=own(), guess=guess,
    )


def _search_choices(prob: _Problem, inst: GroupBalance, subs: dict, deadline: Deadline, upper: int):
    """Spread then moves/restore by the box-choice model (:mod:`rebalproof.solver.choice`), capacities or leaving members."""
    d = math.lcm(*sorted(set(prob.caps.values())))

    def boxes_of(host):
        own = own_options(prob, host, d)
        box = {g: {m: (max(0, -(-p * c // d) - k), p * c // d) for m, c in prob.caps.items()} for g, (p, k) in own.items()}
        return box["(all)"], {s: box[s] for s in prob.subs}

    return search_choices(prob, inst, subs, upper=upper, deadline=deadline, stage3=lambda i, s: _flow_stage3(prob, i, s), boxes_of=boxes_of,
                          soft=lambda i, s: _soft_layout(prob, i, s))


def _own_box(prob: _Problem, incumbent, denominator: int):
    """``(spread, box)`` of the incumbent's actives: per group its own level (top load) and width (imbalance)."""
    counts = {g: {m: 0 for m in prob.caps} for g in [*prob.subs, "(all)"]}
    for m, a in incumbent.answer.members:
        if m in prob.caps:
            for t in a.active:
                counts[subtopology_of(t)][m] += 1
                counts["(all)"][m] += 1
    box, spread = {}, 0
    for g, n in counts.items():
        top = max(Fraction(n[m], prob.caps[m]) for m in prob.caps)
        k = imbalance(n, prob.caps)
        spread += k if g != "(all)" else 0
        p = int(top * denominator)
        box[g] = {m: (max(0, -(-p * c // denominator) - k), p * c // denominator) for m, c in prob.caps.items()}
    return spread, box


def _spread_bound(lb: int, searched, floor_proof: str):
    if searched.spread == lb:
        return (lb, "flow-cut" if lb else "arithmetic", floor_proof)
    return (searched.spread, "benders", f"every subtopology is at least its own least ({floor_proof or 'each at least 0'}); with the instance box those floors meet "
            f"in no layout, and the master over per-subtopology boxes (Z3; CP-SAT with capacities or leaving members) with {searched.feasibility_cuts} feasibility cuts (each a node set no flow can feed, "
            f"checked by summing its arcs' bounds) is unsat for spread <= {searched.spread - 1}")


def _kept(incumbent) -> str:
    return f"; the answer is the best found ({incumbent.source})" if incumbent.answer is not None else ""


def _timed_out(view, facts, prob: _Problem, inst: GroupBalance, bounds: dict, searched, finish, incumbent):
    """INCONCLUSIVE with what was proven so far, and the best layout found (else the relaxation's: spread left free)."""
    w = prob.weight
    bounds["restore"] = (prob.const_restore, "arithmetic", f"{prob.const_restore} cold copies every layout has")
    found = None
    if searched is not None:
        chosen = isinstance(searched, ChoiceSearch)
        if searched.spread_lower > bounds["spread"][0]:
            bounds["spread"] = ((searched.spread_lower, searched.spread_method, searched.spread_proof) if chosen else
                                (searched.spread_lower, "benders", f"the master over per-subtopology boxes and checked cuts admits no box of spread <= {searched.spread_lower - 1}"))
        if searched.cost_lower:
            method = searched.cost_method if chosen else "benders" if searched.best else "flow-duals"
            bounds["moves"] = (searched.cost_lower // w, method, f"least cost {w}*moves + cold actives proven >= {searched.cost_lower}" + (f": {searched.cost_proof}" if chosen else ""))
        found = searched.best
    floor, relaxed = _relaxed(prob, inst)
    if floor is not None and "moves" not in bounds:
        bounds["moves"] = (floor // w, "flow-duals", f"min-cost flow with spread left free (a relaxation) over every instance box, proven least by node potentials, moves {floor // w}")
    found = found or relaxed
    engine = "flow" if searched is None else "flow+choice" if isinstance(searched, ChoiceSearch) else "flow+benders"
    if found is not None:
        incumbent.offer(place_standbys(view, facts, found[0]), engine)
    answer = incumbent.answer
    minimising = "spread" if searched is None or searched.spread is None else "moves"
    return finish(INCONCLUSIVE, answer, _bounds(view, facts, answer, bounds), f"timed out while minimising {minimising}" + _kept(incumbent), engine)


def _boxes_of(prob: _Problem, host: dict[str, str]) -> dict:
    """Per subtopology, the box [least, most] of ``host``'s counts over the staying members."""
    counts = {s: {m: 0 for m in prob.caps} for s in prob.subs}
    for t, m in host.items():
        if m in prob.caps:
            counts[subtopology_of(t)][m] += 1
    return {s: {m: (min(c.values()), max(c.values())) for m in c} for s, c in counts.items() if c}


def _bounds(view, facts, answer, bounds) -> list[Bound]:
    values = evaluate(view, answer, facts).as_dict()
    out = []
    for name in OBJECTIVES:
        lo, method, proof = bounds.get(name, (0, "none", "not reached"))
        out.append(Bound(name, values[name], lo, method, proof))
    return out
