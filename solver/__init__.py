"""Z3 and flow over the assignment rules: optimal reference assignments with proofs, explanations.

See :mod:`rebalproof.solver.rules` (hard rules per rule set), :mod:`rebalproof.solver.objectives`
(the lexicographic objectives), :mod:`rebalproof.solver.encode` (named Z3 constraints) and
:mod:`rebalproof.solver.staged` (the reference staged Z3 engine).
"""

from rebalproof.solver.objectives import OBJECTIVES, evaluate
from rebalproof.solver.result import INCONCLUSIVE, INFEASIBLE, OPTIMAL, Bound, Optimum
from rebalproof.solver.rules import RULE_SETS, Facts, Violation, rule_set, violations

__all__ = [
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
