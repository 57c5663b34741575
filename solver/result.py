"""Three-valued answers of the optimiser: proven optimal, best found with bounds, or infeasible.

An :class:`Optimum` carries, per objective, a :class:`Bound`: the value of the answer and the
proven lower bound, with the proof of that bound said in words (``method`` names the kind:
``z3-unsat``, ``flow-cut``, ``flow-duals``, ``benders``, ``lp-dual``, ``option-lp``, ``lp-tree``, ``scip``, ``exhaustive``,
``arithmetic``, ``fixpoint``). An objective is
proven optimal when every objective before it is proven and its unconditional lower bound
meets its value. Nothing here is ever a silent guess:
a timeout gives ``inconclusive`` with the best found and the bounds proven so far.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from rebalproof.model.assignment import Assignment
from rebalproof.model.codec import encode_assignment

__all__ = ["OPTIMAL", "INCONCLUSIVE", "INFEASIBLE", "WORD_OF_A_SOLVER", "Bound", "Optimum"]

OPTIMAL, INCONCLUSIVE, INFEASIBLE = "optimal", "inconclusive", "infeasible"

WORD_OF_A_SOLVER = frozenset({"z3-unsat", "benders", "scip"})
"""Methods whose bound rests on an outside solver's word (Z3's unsat, a CP-SAT or Z3 master's
bound, SCIP's finished branch and bound); every other method's bound is re-checked by
rebalproof's own arithmetic (flow cuts, potentials, LP multipliers, enumeration)."""


@dataclass(frozen=True)
class Bound:
    """One objective of the answer: its value and what is proven about the optimum.

    Attributes
    ----------
    name : str
        The objective (:data:`rebalproof.solver.objectives.OBJECTIVES`).
    value : int or None
        Its value in the answer (None when there is no answer).
    lower : int
        Proven: no assignment keeping the rules, with the objectives before this one at their
        values, does better than ``lower``.
    method : str
        How ``lower`` is proven: ``z3-unsat``, ``flow-cut``, ``flow-duals``, ``benders`` (a Z3
        master over checked flow cuts, :mod:`rebalproof.solver.benders`), ``lp-dual`` (LP multipliers
        over the box-choice model, checked by exact arithmetic, :mod:`rebalproof.solver.choice`),
        ``option-lp`` (per subtopology and option, checked LP multipliers of its own classes, the
        best mix of options within the spread by exact dynamic programming,
        :mod:`rebalproof.solver.option_bound`),
        ``lp-tree`` (a branch and bound over that model whose tree, with checked LP multipliers at
        every node, rebalproof re-checks in full, :mod:`rebalproof.solver.tree`),
        ``scip`` (SCIP's branch and bound over that model: the solver's word), ``exhaustive`` (every
        layout scored), ``arithmetic`` (a count every assignment has), ``fixpoint`` (the rules
        allow one answer) or ``none``.
    proof : str
        The claim shown impossible, in words (``imbalance <= 0 is infeasible: ...``).
    given : str
        Empty when ``lower`` bounds the lexicographic optimum itself (*unconditional*); else
        what it assumes beyond the rules, e.g. ``spread = 42`` -- the layers above at the
        answer's values, which the optimum need not share.
    earlier_proven : bool
        Whether every objective before this one is proven (set by :class:`Optimum`).

    ``checked`` says whether rebalproof re-checked ``lower`` by its own arithmetic (False for
    ``z3-unsat``, ``benders`` and ``scip``: a solver's word).

    ``proven`` is a claim about the lexicographic optimum: every earlier objective is proven,
    the bound is unconditional and it meets the value. A value meeting a bound under an
    unproven layer above is not a proof (the optimum of that layer may cost more here).
    """

    name: str
    value: int | None
    lower: int
    method: str
    proof: str
    given: str = ""
    earlier_proven: bool = True

    @property
    def unconditional(self) -> bool:
        return not self.given

    @property
    def checked(self) -> bool:
        """Whether rebalproof re-checked the bound itself (:data:`WORD_OF_A_SOLVER` says which methods it did not)."""
        return self.method not in WORD_OF_A_SOLVER

    @property
    def proven(self) -> bool:
        return self.earlier_proven and self.unconditional and self.value is not None and self.value == self.lower

    def to_json(self) -> dict:
        out = {"name": self.name, "value": self.value, "lower_bound": self.lower, "proven": self.proven, "method": self.method, "proof": self.proof, "unconditional": self.unconditional, "checked": self.checked}
        if self.given:
            out["given"] = self.given
        return out


@dataclass(frozen=True)
class Optimum:
    """What :func:`rebalproof.solver.optimize.optimal` found.

    ``status`` is ``optimal`` (every objective proven), ``inconclusive`` (a best answer and
    bounds, with ``reason``) or ``infeasible`` (no assignment keeps the rules; ``reason`` says
    why, from an unsat core).
    """

    status: str
    rules: str
    assignment: Assignment | None
    objectives: tuple[Bound, ...]
    reason: str = ""
    engine: str = ""
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self):
        settled, ok = [], True
        for b in self.objectives:
            b = replace(b, earlier_proven=ok)
            ok = ok and b.proven
            settled.append(b)
        object.__setattr__(self, "objectives", tuple(settled))

    @property
    def values(self) -> dict[str, int | None]:
        return {b.name: b.value for b in self.objectives}

    def bound(self, name: str) -> Bound:
        for b in self.objectives:
            if b.name == name:
                return b
        raise KeyError(name)

    def to_json(self) -> dict:
        out = {
            "status": self.status,
            "rules": self.rules,
            "engine": self.engine,
            "seconds": round(self.seconds, 3),
            "objectives": [b.to_json() for b in self.objectives],
            "assignment": encode_assignment(self.assignment) if self.assignment is not None else None,
        }
        if self.reason:
            out["reason"] = self.reason
        if self.notes:
            out["notes"] = list(self.notes)
        return out
