"""Assignor specs: the one string a user writes to name an assignor, resolved to a callable.

A spec is one of

- a built-in name, optionally with options: ``ha``, ``learner:version=1,imbalance=0.2``;
- ``py:package.module:function`` — a Python function from the input's JSON object to the
  answer's (see :class:`~rebalproof.model.assignors.external.PyAssignor`);
- ``exec:COMMAND`` — a program reading one ``RebalanceInput`` JSON line per answer line
  (see :class:`~rebalproof.model.assignors.external.ExecAssignor`).

Whatever the kind, :func:`resolve` gives a :class:`ResolvedAssignor`: call it with a
:class:`~rebalproof.model.view.RebalanceInput`, get an :class:`~rebalproof.model.assignment.Assignment`
or an :class:`~rebalproof.errors.AssignorError` (a finding, with the input); close it when done
(it is a context manager). A bad spec is an :class:`~rebalproof.errors.InputError`.

Examples
--------
>>> from rebalproof.model.view import RebalanceInput, Task, Member
>>> view = RebalanceInput(tasks=(Task(id="0_0"),), members=(Member(id="I1"),))
>>> with resolve("py:rebalproof.model.assignors.spec:_example") as assignor:
...     assignor(view).of("I1").active, assignor.calls
(('0_0',), 1)
"""

from __future__ import annotations

from typing import Callable

from rebalproof.errors import AssignorError, InputError
from rebalproof.model.assignment import Assignment
from rebalproof.model.assignors import builtin, builtin_names, parse_options
from rebalproof.model.assignors.external import ExecAssignor, PyAssignor, where_raised
from rebalproof.model.codec import check_ids, encode_input
from rebalproof.model.view import RebalanceInput

__all__ = ["PREFIXES", "ResolvedAssignor", "resolve", "spec_help"]

PREFIXES = ("py:", "exec:")


def spec_help() -> str:
    """One line naming every form a spec can take (for errors and ``--help``)."""
    try:
        names = ", ".join(builtin_names())
    except ImportError:  # a built-in module that does not import is reported when it is asked for
        names = "eager, ha, learner, sticky"
    return f"a built-in one ({names}, with options as name:key=value,...), py:package.module:function or exec:COMMAND"


class ResolvedAssignor:
    """A resolved spec: callable on a view, counts its calls, closes what it started.

    Attributes
    ----------
    name : str
        The spec as given (how findings and reports name it).
    kind : str
        ``"builtin"``, ``"py"`` or ``"exec"``.
    rules : str or None
        The rule set a built-in promises (``ha``, ``learner``, ``sticky``, ...); None for an
        external assignor, whose rules the user chooses.
    calls : int
        How many times it was called.
    """

    def __init__(self, *, name: str, kind: str, call: Callable[[RebalanceInput], Assignment], rules: str | None, backend=None):
        self.name = name
        self.kind = kind
        self.rules = rules
        self.calls = 0
        self._call = call
        self._backend = backend

    @property
    def starts(self) -> int:
        """Processes started so far (``exec:`` only; 0 otherwise)."""
        return getattr(self._backend, "starts", 0)

    @property
    def backend(self):
        """The :class:`ExecAssignor` / :class:`PyAssignor` behind an external spec, else None."""
        return self._backend

    def __call__(self, view: RebalanceInput) -> Assignment:
        self.calls += 1
        return self._call(view)

    def close(self) -> None:
        """Stop whatever the assignor started (an ``exec:`` process); safe to call twice."""
        if self._backend is not None:
            self._backend.close()

    def __enter__(self) -> "ResolvedAssignor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResolvedAssignor({self.name!r}, kind={self.kind!r}, calls={self.calls})"


def resolve(spec: str, *, timeout: float = 10.0, start_timeout: float | None = None) -> ResolvedAssignor:
    """The assignor named by ``spec``; an :class:`InputError` saying what specs look like otherwise.

    ``timeout`` (seconds per call) and ``start_timeout`` (extra for the first call after a
    process starts) apply to ``exec:`` assignors only.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"give an assignor: {spec_help()}")
    spec = spec.strip()
    if spec.startswith("exec:"):
        backend = ExecAssignor(spec[len("exec:"):].strip(), timeout=timeout, start_timeout=start_timeout, name=spec)
        return ResolvedAssignor(name=spec, kind="exec", call=backend, rules=None, backend=backend)
    if spec.startswith("py:"):
        backend = PyAssignor(spec[len("py:"):].strip(), name=spec)
        return ResolvedAssignor(name=spec, kind="py", call=backend, rules=None, backend=backend)
    if spec.startswith("spec:"):
        raise InputError(
            f"'{spec}' stands for every answer the rules allow, so it has no single answer: use it in "
            "'rebalproof check --assignor spec:ha', and 'rebalproof optimal' for the best answer to one input"
        )
    name, _, options = spec.partition(":")
    if name not in builtin_names():
        raise InputError(f"unknown assignor '{spec}'; give {spec_help()}")
    info = builtin(name)
    assignor = info.make(**parse_options(info, options))
    return ResolvedAssignor(name=spec, kind="builtin", call=_guarded(assignor, spec), rules=info.rules)


def _guarded(assignor: Callable[[RebalanceInput], Assignment], name: str) -> Callable[[RebalanceInput], Assignment]:
    """A built-in, held to the same contract as an external one: an exception or a wrong id is a finding."""

    def call(view: RebalanceInput) -> Assignment:
        try:
            answer = assignor(view)
        except (InputError, AssignorError):
            raise
        except Exception as exc:
            raise AssignorError(
                f"{name} crashed on the input below: {type(exc).__name__}: {exc}{where_raised(exc)}",
                kind="crash",
                assignor=name,
                input_json=encode_input(view),
            ) from exc
        if not isinstance(answer, Assignment):
            raise AssignorError(
                f"{name} answered a {type(answer).__name__} on the input below, not an Assignment",
                kind="malformed",
                assignor=name,
                input_json=encode_input(view),
            )
        try:
            check_ids(answer, view)
        except InputError as exc:
            raise AssignorError(
                f"{name} answered an assignment that does not fit the input below: {exc}",
                kind="invalid",
                assignor=name,
                input_json=encode_input(view),
            ) from None
        return answer

    return call


def _example(obj: dict) -> dict:
    """The doctest's ``py:`` assignor: every task active on the first member."""
    first = obj["members"][0]["id"]
    return {"assignment": {first: {"active": [t["id"] for t in obj["tasks"]]}}}
