"""A pytest plugin: the ``rebalproof_oracle`` fixture, so a user's own suite can use the oracle.

Installed with rebalproof it is found by pytest itself (entry point ``pytest11``); otherwise
load it with ``-p rebalproof.pytest_plugin`` or ``pytest_plugins = ["rebalproof.pytest_plugin"]``
in the test module. Then::

    def test_my_assignor(rebalproof_oracle):
        rebalproof_oracle.check(rebalance_json, my_assignor(rebalance_json))     # one answer
        rebalproof_oracle.check_assignor(my_assignor, [rebalance_json, ...])     # a py: function
        rebalproof_oracle.check_assignor("exec:node my_assignor.js", inputs)     # any spec
        rebalproof_oracle.metamorphic(my_assignor, rebalance_json)               # no answer needed

Each method raises an :class:`AssertionError` listing every violation (property, what is
wrong, which tasks and instances), so pytest shows it as an ordinary test failure; on success
it returns what it judged. An assignor given as a plain function follows the ``py:`` contract:
the input's JSON object (a dict) in, the Assignment's JSON object (or an
:class:`~rebalproof.model.assignment.Assignment`) out. A string is any spec: a built-in name,
``py:module:function`` or ``exec:COMMAND``. A crash, hang or malformed answer of the assignor is
a finding and fails the test with its message.
"""

from __future__ import annotations

from typing import Callable, Iterable

import pytest

from rebalproof.errors import AssignorError
from rebalproof.model.assignment import Assignment
from rebalproof.model.codec import decode_input, encode_input
from rebalproof.model.view import RebalanceInput
from rebalproof.oracle import OracleReport, check
from rebalproof.properties.metamorphic import check_metamorphic
from rebalproof.properties.verdict import Verdict

__all__ = ["Oracle", "FunctionAssignor", "rebalproof_oracle"]

_SHOWN = 20  # failures listed in one AssertionError


def _view(value) -> RebalanceInput:
    return value if isinstance(value, RebalanceInput) else decode_input(value)


def _describe(v: Verdict) -> str:
    where = []
    if v.tasks:
        where.append(f"tasks {', '.join(v.tasks)}")
    if v.members:
        where.append(f"instances {', '.join(v.members)}")
    return f"{v.property}: {v.message}" + (f" [{'; '.join(where)}]" if where else "")


def _fail(title: str, problems: list[str]) -> None:
    __tracebackhide__ = True
    shown = problems[:_SHOWN] + ([f"... and {len(problems) - _SHOWN} more"] if len(problems) > _SHOWN else [])
    raise AssertionError(title + "\n" + "\n".join(f"  {p}" for p in shown))


class FunctionAssignor:
    """A Python function of the ``py:`` contract as an assignor on views (with ``call_json``).

    The function gets a fresh copy of the input's JSON object and answers the Assignment's JSON
    object, or an :class:`Assignment`. What it raises or answers wrongly is an
    :class:`~rebalproof.errors.AssignorError` carrying the input, as for ``py:`` specs.
    """

    rules = None

    def __init__(self, function: Callable, *, name: str | None = None):
        self.function = function
        self.name = name or f"py:{getattr(function, '__module__', '?')}:{getattr(function, '__qualname__', repr(function))}"
        self.calls = 0

    def call_json(self, obj: dict, view: RebalanceInput) -> Assignment:
        """The answer to ``obj`` (the JSON object of ``view``, in whatever order it is listed)."""
        from rebalproof.model.assignors.external import judge_answer

        self.calls += 1
        try:
            answer = self.function(obj)
        except Exception as exc:
            raise AssignorError(
                f"{self.name} crashed on the input below: {type(exc).__name__}: {exc}",
                kind="crash", assignor=self.name, input_json=obj,
            ) from None
        if isinstance(answer, Assignment):
            from rebalproof.model.codec import encode_assignment

            answer = encode_assignment(answer)
        if not isinstance(answer, dict):
            raise AssignorError(
                f"{self.name} answered a {type(answer).__name__} on the input below, not an Assignment dict",
                kind="malformed", assignor=self.name, input_json=obj,
            )
        return judge_answer(answer, view, assignor=self.name, input_json=obj)

    def __call__(self, view: RebalanceInput) -> Assignment:
        return self.call_json(encode_input(view), view)

    def close(self) -> None:
        """Nothing to release."""


class Oracle:
    """What the ``rebalproof_oracle`` fixture gives: the oracle as assertions."""

    def __init__(self, *, timeout: float = 10.0):
        self.timeout = timeout
        self._opened: list = []

    # -- assignors ----------------------------------------------------------------------
    def assignor(self, fn_or_spec):
        """An assignor on views from a spec string, a ``py:``-style function, or an assignor.

        Assignors resolved from a spec here are closed when the test ends.
        """
        if isinstance(fn_or_spec, str):
            from rebalproof.model.assignors.spec import resolve

            resolved = resolve(fn_or_spec, timeout=self.timeout)
            self._opened.append(resolved)
            return resolved
        if hasattr(fn_or_spec, "calls") and hasattr(fn_or_spec, "close"):
            return fn_or_spec  # already an assignor on views (resolved spec, FunctionAssignor)
        if callable(fn_or_spec):
            return FunctionAssignor(fn_or_spec)
        raise TypeError(f"give an assignor spec (str) or a function of the input dict, got {type(fn_or_spec).__name__}")

    def close(self) -> None:
        """Close every assignor this oracle resolved (``exec:`` processes stop)."""
        while self._opened:
            self._opened.pop().close()

    # -- checks -------------------------------------------------------------------------
    def check(self, input, output, *, rules: str = "ha") -> OracleReport:
        """Judge one answer; an AssertionError naming every violated property otherwise.

        ``input`` and ``output`` are the contract's JSON objects (or the decoded values).
        """
        __tracebackhide__ = True
        report = check(input, output, rules=rules)
        if not report.ok:
            _fail(f"rebalproof oracle ({rules} rules): the answer violates {len(report.violations)} "
                  f"propert{'y' if len(report.violations) == 1 else 'ies'}",
                  [_describe(v) for v in report.violations])
        return report

    def check_assignor(self, fn_or_spec, inputs: Iterable, *, rules: str | None = None) -> list[OracleReport]:
        """Run the assignor on each input and judge each answer; one AssertionError listing all failures.

        ``rules`` defaults to a built-in's own rule set, else ``ha``. A finding (crash, hang,
        malformed answer) on an input is a failure of that input.
        """
        __tracebackhide__ = True
        assignor = self.assignor(fn_or_spec)
        rules = rules or getattr(assignor, "rules", None) or "ha"
        reports: list[OracleReport] = []
        problems: list[str] = []
        count = 0
        for index, value in enumerate(inputs):
            count += 1
            view = _view(value)
            try:
                answer = assignor(view)
            except AssignorError as error:
                problems.append(f"input {index}: finding ({error.kind}): {error}")
                continue
            report = check(view, answer, rules=rules)
            reports.append(report)
            problems.extend(f"input {index}: {_describe(v)}" for v in report.violations)
        if problems:
            failed = len({p.split(":", 1)[0] for p in problems})
            _fail(f"rebalproof oracle ({rules} rules): {failed} of {count} inputs fail", problems)
        return reports

    def metamorphic(self, fn_or_spec, view, *, seed: int = 0, samples: int = 8,
                    names: tuple[str, ...] | None = None) -> tuple[Verdict, ...]:
        """The metamorphic properties (:mod:`rebalproof.properties.metamorphic`) on one input.

        Violations raise an AssertionError; inconclusive verdicts are returned, not raised (look
        at them: a property that could not be decided proves nothing). ``names`` picks some of
        ``renaming``, ``reordering``, ``idempotence``, ``lag-monotonicity``.
        """
        __tracebackhide__ = True
        assignor = self.assignor(fn_or_spec)
        try:
            verdicts = check_metamorphic(assignor, _view(view), seed=seed, samples=samples, names=names)
        except AssignorError as error:
            _fail("rebalproof metamorphic check: the assignor misbehaved (a finding)", [f"{error.kind}: {error}"])
        violated = [v for v in verdicts if v.violated]
        if violated:
            _fail(f"rebalproof metamorphic check (seed {seed}): {len(violated)} violated", [_describe(v) for v in violated])
        return verdicts


@pytest.fixture
def rebalproof_oracle():
    """The rebalproof golden oracle as assertions (:class:`Oracle`); closes what it started."""
    oracle = Oracle()
    yield oracle
    oracle.close()
