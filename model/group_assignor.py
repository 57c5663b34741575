"""The leader's assignor inside the group model, deterministic or not.

The model asks a *chooser* for every answer the assignor may give on a view:
``choices(view) -> tuple[Assignment, ...]``; each answer is a separate successor of the
rebalance step. A plain assignor (``RebalanceInput -> Assignment``: a built-in, a resolved
``py:``/``exec:`` spec) is wrapped as a one-answer chooser; a nondeterministic one (the
solver's "every assignment the rules allow", ``spec:ha``) is plugged in as an object with a
``choices`` method.

Answers are memoised per view (the same view recurs in many states); an answer that is not an
:class:`Assignment` for the view is an :class:`~rebalproof.errors.AssignorError` (a finding).
"""

from __future__ import annotations

from typing import Callable, Protocol as TypingProtocol, runtime_checkable

from rebalproof.errors import AssignorError, InputError
from rebalproof.model.assignment import Assignment
from rebalproof.model.codec import check_ids, encode_input
from rebalproof.model.view import RebalanceInput

__all__ = ["Chooser", "OneChoice", "as_chooser", "MemoChooser"]


@runtime_checkable
class Chooser(TypingProtocol):
    """A possibly nondeterministic assignor: every answer it may give on a view."""

    def choices(self, view: RebalanceInput) -> tuple[Assignment, ...]: ...


class OneChoice:
    """A deterministic assignor as a one-answer chooser."""

    def __init__(self, assignor: Callable[[RebalanceInput], Assignment], *, name: str | None = None):
        self.assignor = assignor
        self.name = name or getattr(assignor, "name", None) or getattr(assignor, "__name__", "assignor")

    def choices(self, view: RebalanceInput) -> tuple[Assignment, ...]:
        return (self.assignor(view),)


class MemoChooser:
    """A chooser with answers memoised by a hashable key of the view and checked once.

    Not shared between processes: pickling drops the memo (the engine of another process
    rebuilds it), so the model stays picklable for a distributed engine.
    """

    def __init__(self, inner, *, name: str, limit: int = 200_000):
        self.inner = inner
        self.name = name
        self.limit = limit
        self._memo: dict = {}
        self.calls = 0

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_memo"] = {}
        return state

    def choices_for(self, key, build_view: Callable[[], RebalanceInput]) -> tuple[RebalanceInput, tuple[Assignment, ...]]:
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        view = build_view()
        self.calls += 1
        answers = tuple(self.inner.choices(view))
        if not answers:
            raise AssignorError(
                f"{self.name} gave no answer on the input below", kind="malformed", assignor=self.name,
                input_json=encode_input(view),
            )
        for answer in answers:
            if not isinstance(answer, Assignment):
                raise AssignorError(
                    f"{self.name} answered a {type(answer).__name__} on the input below, not an Assignment",
                    kind="malformed", assignor=self.name, input_json=encode_input(view),
                )
            try:
                check_ids(answer, view)
            except InputError as exc:
                raise AssignorError(
                    f"{self.name} answered an assignment that does not fit the input below: {exc}",
                    kind="invalid", assignor=self.name, input_json=encode_input(view),
                ) from None
        if len(self._memo) >= self.limit:
            self._memo.clear()
        self._memo[key] = (view, answers)
        return view, answers


def as_chooser(assignor, *, name: str | None = None) -> MemoChooser:
    """Wrap an assignor (callable or chooser) as a memoised :class:`MemoChooser`."""
    if isinstance(assignor, MemoChooser):
        return assignor
    if hasattr(assignor, "choices"):
        inner = assignor
    elif callable(assignor):
        inner = OneChoice(assignor, name=name)
    else:
        raise InputError(f"an assignor must be callable or have choices(view); got {type(assignor).__name__}")
    return MemoChooser(inner, name=name or getattr(inner, "name", None) or "assignor")
