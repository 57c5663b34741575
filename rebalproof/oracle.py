"""The golden oracle: check one assignor answer against the rules, from a user's own tests.

:func:`check` takes the leader's view of one rebalance and an assignor's answer — JSON objects
as in the contract (docs/DESIGN.md "Contracts") or the values :mod:`rebalproof.model` decodes them
to — and returns an :class:`OracleReport` with one verdict per property of
:data:`rebalproof.properties.PER_ASSIGNMENT`. The ``rebalproof oracle`` command is this
function on two files.
"""

from __future__ import annotations

from dataclasses import dataclass

from rebalproof.errors import InputError
from rebalproof.model.assignment import Assignment
from rebalproof.model.codec import check_ids, decode_assignment, decode_input
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.catalogue import check_assignment, check_rules
from rebalproof.properties.verdict import Status, Verdict

__all__ = ["ANSWERS", "OracleReport", "check", "judge"]

#: The property a malformed answer violates: the name ``check`` gives the run property (an
#: assignor answered no assignment for its view) and corpus mode counts as malformed answers.
ANSWERS = "assignor-answers"


@dataclass(frozen=True, kw_only=True)
class OracleReport:
    """The verdicts on one answer, in catalogue order.

    Attributes
    ----------
    rules : str
        The rule set the answer was judged by.
    verdicts : tuple of Verdict
        One per per-assignment property, in catalogue order; properties the rule set does not
        promise are ``NOT_PROMISED``.
    """

    rules: str
    verdicts: tuple[Verdict, ...]

    @property
    def ok(self) -> bool:
        """True when no property is violated (inconclusive and not promised are not violations)."""
        return not self.violations

    @property
    def violations(self) -> tuple[Verdict, ...]:
        """The violated verdicts, in catalogue order."""
        return tuple(v for v in self.verdicts if v.status is Status.VIOLATED)

    @property
    def inconclusive(self) -> tuple[Verdict, ...]:
        """The verdicts that could not be decided, in catalogue order."""
        return tuple(v for v in self.verdicts if v.status is Status.INCONCLUSIVE)

    def verdict(self, name: str) -> Verdict:
        """The verdict of the property called ``name``."""
        for v in self.verdicts:
            if v.property == name:
                return v
        raise KeyError(name)

    def to_json(self) -> dict:
        """``{"rules", "ok", "violations": [names], "verdicts": [...]}``, ready for ``json.dumps``."""
        return {
            "rules": self.rules,
            "ok": self.ok,
            "violations": [v.property for v in self.violations],
            "verdicts": [v.to_json() for v in self.verdicts],
        }

    def lines(self) -> tuple[str, ...]:
        """One plain line per verdict: ``status  property  message``."""
        width = max((len(v.property) for v in self.verdicts), default=0)
        return tuple(f"{str(v.status):<12}  {v.property:<{width}}  {v.message}" for v in self.verdicts)


def _view(value) -> RebalanceInput:
    if isinstance(value, RebalanceInput):
        return value
    if isinstance(value, dict):
        return decode_input(value)
    raise InputError(f"the input must be a RebalanceInput or its JSON object (a dict), got {type(value).__name__}")


def _answer(value, view: RebalanceInput) -> Assignment:
    if isinstance(value, Assignment):
        check_ids(value, view)
        return value
    if isinstance(value, dict):
        return decode_assignment(value, view)
    raise InputError(f"the output must be an Assignment or its JSON object (a dict), got {type(value).__name__}")


def check(input, output, *, rules: str = "ha") -> OracleReport:
    """Judge one assignor answer against the per-rebalance properties.

    Parameters
    ----------
    input : dict or RebalanceInput
        The leader's view of the rebalance: the contract's ``RebalanceInput`` JSON object, or
        the decoded value.
    output : dict or Assignment
        The assignor's answer: the contract's ``Assignment`` JSON object, or the value. Its ids
        are checked against ``input``: every input member appears, no unknown member or task.
    rules : str, optional
        The rule set to judge by: ``"ha"`` (KIP-441, the default), ``"sticky"``, ``"eager"`` or
        ``"learner"`` (see :data:`rebalproof.properties.RULE_SETS`).

    Returns
    -------
    OracleReport
        One verdict per property; ``.ok`` is False when a property is violated.

    Raises
    ------
    InputError
        When ``input`` or ``output`` breaks the contract (unknown fields, ids, a missing member)
        or ``rules`` names no rule set; the message says what to fix.

    Examples
    --------
    >>> from rebalproof.oracle import check
    >>> rebalance = {"config": {"num_standby_replicas": 1},
    ...              "tasks": [{"id": "0_0"}, {"id": "1_0", "stateful": False}],
    ...              "members": [{"id": "I1", "active": ["0_0"], "lags": {"0_0": 0}},
    ...                          {"id": "I2", "active": ["1_0"], "standby": ["0_0"], "lags": {"0_0": 0}}]}
    >>> report = check(rebalance, {"assignment": {"I1": {"active": ["0_0"]},
    ...                                           "I2": {"active": ["1_0"], "standby": ["0_0"]}}})
    >>> report.ok
    True
    >>> report = check(rebalance, {"assignment": {"I1": {"active": ["0_0", "1_0"], "standby": ["0_0"]},
    ...                                           "I2": {}}})
    >>> report.ok, [v.property for v in report.violations]
    (False, ['no-colocation', 'standby-count', 'fixpoint', 'balanced'])
    >>> print(report.verdict("no-colocation").message)
    I1 holds 0_0 twice (active and standby)
    >>> unbalanced = {"assignment": {"I1": {"active": ["0_0", "1_0"]}, "I2": {"standby": ["0_0"]}}}
    >>> check(rebalance, unbalanced).ok, check(rebalance, unbalanced, rules="learner").ok
    (False, True)
    """
    check_rules(rules)
    view = _view(input)
    answer = _answer(output, view)
    return OracleReport(rules=rules, verdicts=check_assignment(view, answer, rules=rules))


def judge(input, output, *, rules: str = "ha") -> OracleReport:
    """:func:`check`, with an answer that is no assignment for its input judged as a *finding*.

    #10 item 2: "Malformed answers are findings, wherever an assignor answers". ``output`` is
    the implementation's answer: when it is not an ``Assignment`` object of the contract
    (another JSON value, unknown fields, a member or task id ``input`` does not name, an input
    member left out) the report holds one violated verdict, :data:`ANSWERS`, whose message
    is the one corpus mode gives a malformed record (``the answer is no assignment for its
    input: ...``). ``input`` and ``rules`` are the user's: their mistakes still raise.

    Raises
    ------
    InputError
        When ``input`` breaks the contract or ``rules`` names no rule set.

    Examples
    --------
    >>> rebalance = {"tasks": [{"id": "0_0"}], "members": [{"id": "I1"}]}
    >>> report = judge(rebalance, {"assignment": {"I1": {"active": ["0_0"]}, "I9": {}}})
    >>> report.ok, [v.property for v in report.violations]
    (False, ['assignor-answers'])
    >>> print(report.violations[0].message)
    the answer is no assignment for its input: assignment: unknown member 'I9': the input's members are I1
    """
    check_rules(rules)
    view = _view(input)
    try:  # any JSON value is read as the contract's object, as corpus mode reads a record's output
        answer = _answer(output, view) if isinstance(output, Assignment) else decode_assignment(output, view)
    except InputError as exc:
        finding = Verdict(property=ANSWERS, status=Status.VIOLATED, message=f"the answer is no assignment for its input: {exc}")
        return OracleReport(rules=rules, verdicts=(finding,))
    return OracleReport(rules=rules, verdicts=check_assignment(view, answer, rules=rules))
