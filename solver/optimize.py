"""``optimal``: the optimal reference assignment of one rebalance, with a proof per objective.

Engines (the answer and its values do not depend on the engine; the tests hold them equal):

- ``"flow"`` (:mod:`rebalproof.solver.placement`, the default): flow with certificates where
  the structure allows, Z3 on the count model for the rest;
- ``"z3"`` (:mod:`rebalproof.solver.staged`): staged Z3 over the full encoding, the reference.

Examples
--------
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="0_0"), Task(id="0_1")), members=(Member(id="I1", active=("0_0", "0_1")), Member(id="I2")))
>>> result = optimal(view, rules="sticky")
>>> result.status, result.values["imbalance"], result.values["moves"]
('optimal', 0, 1)
"""

from __future__ import annotations

from dataclasses import replace

from rebalproof.errors import InputError
from rebalproof.model.assignment import Assignment
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.common import treated_as_leaving
from rebalproof.solver.placement import solve_placement
from rebalproof.solver.result import Optimum
from rebalproof.solver.rules import Facts, rule_set
from rebalproof.solver.staged import solve_staged

__all__ = ["ENGINES", "optimal"]

ENGINES = ("flow", "z3")


def optimal(view: RebalanceInput, rules: str = "ha", *, timeout: float | None = None, engine: str = "flow") -> Optimum:
    """The lexicographic optimum of :data:`~rebalproof.solver.objectives.OBJECTIVES` under ``rules``.

    Parameters
    ----------
    view : RebalanceInput
        The leader's view.
    rules : str
        Rule set (``ha``, ``sticky``, ``eager``, ``learner``).
    timeout : float, optional
        Seconds; when it passes the answer is ``inconclusive`` with the best found and the
        bounds proven so far (never a silent guess).
    engine : str
        ``"flow"`` or ``"z3"`` (see the module doc).

    Returns
    -------
    Optimum
        ``optimal`` / ``inconclusive`` / ``infeasible``, the answer and one
        :class:`~rebalproof.solver.result.Bound` per objective.
    """
    rs = rule_set(rules)
    if timeout is not None and timeout <= 0:
        raise InputError(f"timeout must be positive seconds, got {timeout}")
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; the engines are {', '.join(ENGINES)}")
    facts = Facts(view, rs)
    if engine == "z3":
        found = solve_staged(view, rs.name, timeout=timeout, facts=facts)
    else:
        found = solve_placement(view, rs.name, timeout=timeout, facts=facts)
    if rs.name == "learner" and found.assignment is not None:
        found = replace(found, assignment=_no_new_learners_on_leaving(view, found.assignment))
    return found


def _no_new_learners_on_leaving(view: RebalanceInput, answer: Assignment) -> Assignment:
    """``answer`` with each replica a leaving member did not hold as a learner going in labelled
    ``standby``, not ``warmup``: under the learner rules a leaving member is given no new learner
    (``staying-learners``; KIP-429 "leader will perform the learner assignment among members without
    intention of leaving"). The label changes no objective and no other rule (replicas count by
    number), so the optimum and its proof stand (red team 15: a proven answer tagged a leaving
    member's restoring copy ``warmup`` and the oracle rejected it)."""
    leaving = treated_as_leaving(view)
    if not leaving:
        return answer
    roles = {}
    for m, given in answer.members:
        standby, warmup = list(given.standby), list(given.warmup)
        if m in leaving and view.has_member(m):
            kept = set(view.member(m).warmup)
            standby += [t for t in warmup if t not in kept]
            warmup = [t for t in warmup if t in kept]
        roles[m] = {"active": list(given.active), "standby": standby, "warmup": warmup}
    return Assignment.build(roles, probing_rebalance=answer.probing_rebalance)
