"""Anytime answers: a valid assignment from the first second, kept as the best found so far.

Before any search the optimiser holds a *sticky greedy* answer, which costs next to nothing:
each active stays on its previous owner when the rules allow, else goes to the allowed staying
member with the least actives per thread (leaving members only when no staying member may hold
it), ties by id; standbys as :func:`~rebalproof.solver.placement.place_standbys` puts them. It
is checked against the hard rules (:func:`rebalproof.solver.rules.violations`) like every
later answer. (The built-in ``ha`` assignor is not asked: at 50x500 it takes longer than the
whole proof.)

Every later layout the search finds replaces the incumbent only when it keeps the rules and is
lexicographically better (:data:`rebalproof.solver.objectives.OBJECTIVES`), so a timeout always
has an answer that the oracle accepts, never ``null`` (unless no assignment keeps the rules).

Examples
--------
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> from rebalproof.solver.rules import Facts
>>> view = RebalanceInput(tasks=(Task(id="0_0"), Task(id="0_1")), members=(Member(id="I1", active=("0_0", "0_1")), Member(id="I2", capacity=2)))
>>> best = Incumbent(view, Facts(view, "sticky"))
>>> best.values.imbalance, best.source
(1, 'greedy')
"""

from __future__ import annotations

from fractions import Fraction

from rebalproof.model.assignment import Assignment
from rebalproof.model.names import id_key
from rebalproof.model.view import RebalanceInput
from rebalproof.solver.objectives import Values, evaluate
from rebalproof.solver.rules import Facts, violations

__all__ = ["Incumbent", "greedy_host"]

def greedy_host(view: RebalanceInput, facts: Facts) -> dict[str, str] | None:
    """Task -> member of the sticky greedy (see the module doc); None if some task has no allowed host."""
    load = {m: 0 for m in view.member_ids}
    staying = set(facts.staying)
    host = {}
    for t in sorted(view.task_ids, key=lambda t: (len(facts.active_hosts[t]), id_key(t))):
        options = facts.active_hosts[t]
        if not options:
            return None
        owner = facts.owner.get(t)
        if owner in options:
            m = owner
        else:
            inside = [m for m in options if m in staying] or list(options)
            m = min(inside, key=lambda m: (Fraction(load[m] + 1, view.member(m).capacity), id_key(m)))
        host[t] = m
        load[m] += 1
    return host


class Incumbent:
    """The best rule-keeping answer seen so far (lexicographically least objective values)."""

    def __init__(self, view: RebalanceInput, facts: Facts):
        self.view, self.facts = view, facts
        self.answer: Assignment | None = None
        self.values: Values | None = None
        self.source = ""
        from rebalproof.solver.placement import keep_learners, place_standbys

        host = greedy_host(view, facts)
        if host is not None:
            # under the learner rules, with the learners learners-kept judges given their copies back
            self.offer(keep_learners(view, facts, place_standbys(view, facts, host)), "greedy")

    def offer(self, answer: Assignment | None, source: str) -> bool:
        """Keep ``answer`` if it keeps the rules and beats the incumbent; whether it was kept."""
        if answer is None or violations(self.view, answer, self.facts.rules, facts=self.facts):
            return False
        values = evaluate(self.view, answer, self.facts)
        if self.values is not None and values.as_tuple() >= self.values.as_tuple():
            return False
        self.answer, self.values, self.source = answer, values, source
        return True
