"""Z3 and flow over the assignment rules: optimal reference assignments with proofs, explanations.

See :mod:`rebalproof.solver.rules` (hard rules per rule set), :mod:`rebalproof.solver.objectives`
(the lexicographic objectives), :mod:`rebalproof.solver.encode` (named Z3 constraints),
:mod:`rebalproof.solver.placement` and :mod:`rebalproof.solver.flow` (the flow engine with
certificates), :mod:`rebalproof.solver.benders` (per-subtopology boxes: a Z3 or CP-SAT master, flow judges),
:mod:`rebalproof.solver.choice` (capacities and leaving members: one (level, width) option per group, LP bounds
checked by :mod:`rebalproof.solver.linear`),
:mod:`rebalproof.solver.exhaustive` (tiny inputs enumerated), :mod:`rebalproof.solver.staged` (the reference staged Z3 engine),
:mod:`rebalproof.solver.optimize` (``optimal``), :mod:`rebalproof.solver.oracle` (``distance``,
``explain``, ``conforms``) and :mod:`rebalproof.solver.spec` (every allowed answer, ``spec:ha``).
"""

from rebalproof.solver.objectives import OBJECTIVES, evaluate
from rebalproof.solver.optimize import ENGINES, optimal
from rebalproof.solver.oracle import BALANCE_MODES, Distance, conforms, distance, explain
from rebalproof.solver.result import INCONCLUSIVE, INFEASIBLE, OPTIMAL, Bound, Optimum
from rebalproof.solver.rules import RULE_SETS, Facts, Violation, rule_set, violations
from rebalproof.solver.spec import SPEC_NAMES, Enumeration, SpecAssignor, SpecTooLarge, enumerate_allowed, resolve_spec

__all__ = [
    "optimal",
    "ENGINES",
    "distance",
    "Distance",
    "explain",
    "conforms",
    "BALANCE_MODES",
    "SpecAssignor",
    "SpecTooLarge",
    "SPEC_NAMES",
    "Enumeration",
    "enumerate_allowed",
    "resolve_spec",
    "OBJECTIVES",
    "evaluate",
    "OPTIMAL",
    "INCONCLUSIVE",
    "INFEASIBLE",
    "Bound",
    "Optimum",
    "RULE_SETS",
    "Facts",
    "Violation",
    "rule_set",
    "violations",
]
