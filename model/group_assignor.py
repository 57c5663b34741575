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

__all__ = [
    "Chooser",
    "OneChoice",
    "as_chooser",
    "MemoChooser",
    "ResolvedForModel",
    "register_chooser",
    "resolve_for_model",
    "TOY_ASSIGNORS",
    "EXTERNAL_RULES",
    "SYMMETRY_MODES",
]

#: ``--symmetry`` modes: sample equivariance first, trust the declaration, always, never.
SYMMETRY_MODES = ("auto", "declared", "on", "off")

#: The rule set an external (``py:``/``exec:``) assignor is judged by unless told otherwise,
#: as in ``rebalproof oracle`` and ``rebalproof assign``.
EXTERNAL_RULES = "ha"


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

    The memo keeps the answers; the views themselves only for the latest ``recent`` keys asked
    (a view is rebuilt from its key past them: a million-state run reaches tens of thousands of
    views, each a few kilobytes as objects, and needs each only around the states that ask);
    equal answers to different views are kept once (round-robin gives 16 distinct answers to
    18,072 views of a 300,000-state run).
    Not shared between processes: pickling drops the memo (the engine of another process
    rebuilds it), so the model stays picklable for a distributed engine.
    """

    def __init__(self, inner, *, name: str, limit: int = 200_000, recent: int = 4096):
        self.inner = inner
        self.name = name
        self.limit = limit
        self.recent = recent
        self._memo: dict = {}  # key -> answers
        self._distinct: dict = {}  # answers -> the equal answers kept (views outnumber answers)
        self._views: dict = {}  # key -> view, for the latest keys asked
        #: views answered by the inner assignor (one call each for a deterministic assignor)
        self.calls = 0
        #: look-ups answered from the memo, without a call
        self.hits = 0
        #: answers computed ahead in a helper process (:mod:`rebalproof.model.answers_ahead`), or None
        self.ahead = None
        #: key -> the most pool ids handed out in a state that asked it (symmetry's check after a
        #: reduced run; None: not recorded, see GroupModel.record_ids)
        self.spawned: dict | None = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_memo"] = {}
        state["_views"] = {}
        state["_distinct"] = {}
        state["ahead"] = None
        state["spawned"] = None if state.get("spawned") is None else {}
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_views", {})
        self.__dict__.setdefault("_distinct", {})
        self.__dict__.setdefault("recent", 4096)
        self.__dict__.setdefault("spawned", None)

    def views(self, rebuild: Callable) -> list[RebalanceInput]:
        """The views answered so far (still in the memo), in the order they were first asked,
        each ``rebuild(key)``."""
        return [rebuild(key) for key in self._memo]

    def view_for(self, key, build_view: Callable[[], RebalanceInput]) -> RebalanceInput:
        """The view of ``key``: kept from a recent ask, or ``build_view()``."""
        view = self._views.get(key)
        if view is None:
            view = self._keep(key, build_view())
        return view

    def _keep(self, key, view: RebalanceInput) -> RebalanceInput:
        if len(self._views) >= self.recent:
            self._views.clear()
        self._views[key] = view
        return view

    def answers_for(self, key, build_view: Callable[[], RebalanceInput]) -> tuple[Assignment, ...]:
        """The answers on the view of ``key``, asking the assignor (once) on a miss."""
        hit = self._memo.get(key)
        if hit is not None:
            self.hits += 1
            return hit
        if self.ahead is not None:
            answers = self.ahead.take(key)  # computed ahead, checked as below; None: ask here
            if answers is not None:
                self.calls += 1
                return self._remember(key, answers)
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
        answers = self._remember(key, answers)
        self._keep(key, view)
        return answers

    def _remember(self, key, answers: tuple) -> tuple:
        """Memoise the checked ``answers`` of ``key`` (equal answers kept once)."""
        if len(self._memo) >= self.limit and self.spawned is None:  # a reduced run keeps every view: each is checked under renamings
            self._memo.clear()
            self._distinct.clear()
        answers = self._distinct.setdefault(answers, answers)
        self._memo[key] = answers
        return answers

    def choices_for(self, key, build_view: Callable[[], RebalanceInput]) -> tuple[RebalanceInput, tuple[Assignment, ...]]:
        """``(view, answers)`` of ``key``."""
        answers = self.answers_for(key, build_view)
        return self.view_for(key, build_view), answers


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


class ResolvedForModel:
    """An assignor spec resolved for the model: the object, its name, rule set, equivariance."""

    def __init__(self, *, assignor, name: str, rules: str | None, equivariant: bool | None, closer=None,
                 kind: str = "builtin"):
        self.assignor = assignor
        self.name = name
        self.rules = rules
        #: builtin | toy | chooser | py | exec
        self.kind = kind
        #: True/False as declared by a built-in; None when unknown (external: sample it)
        self.equivariant = equivariant
        self._closer = closer

    @property
    def external(self) -> bool:
        """True for a ``py:`` or ``exec:`` assignor (an implementation under test)."""
        return self.kind in ("py", "exec")

    @property
    def default_boundary_lags(self) -> bool:
        """True for an external assignor: rebalances may also report caught-up lags at the limit
        (:mod:`rebalproof.model.lag_readings`); the built-ins, the references, are calibrated with
        them on in the test suite and default off (their extra assignor calls buy nothing there)."""
        return self.external

    @property
    def default_symmetry(self) -> str:
        """``auto`` for an external assignor (nothing is declared, so sample), else ``declared``."""
        return "auto" if self.external else "declared"

    def symmetry_for(self, mode: str | None) -> bool | str:
        """The ``symmetry=`` of :func:`~rebalproof.properties.run_check.check_model` for a
        ``--symmetry`` mode (None: :attr:`default_symmetry`)."""
        mode = mode or self.default_symmetry
        if mode not in SYMMETRY_MODES:
            raise InputError(f"--symmetry is one of {', '.join(SYMMETRY_MODES)}, got '{mode}'")
        if mode == "declared":
            return bool(self.equivariant)
        return {"on": True, "off": False, "auto": "auto"}[mode]

    def close(self) -> None:
        if self._closer is not None:
            self._closer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


#: Assignors of this package that are not built-ins (see :mod:`rebalproof.model.toy_assignors`).
TOY_ASSIGNORS = ("learner-naive", "round-robin", "balanced-choices")
_CHOOSER_FACTORIES: dict = {}


def register_chooser(prefix: str, factory) -> None:
    """Plug in nondeterministic assignors: specs starting with ``prefix`` (e.g. ``"spec:"``) are
    resolved by ``factory(rest_of_spec) -> (chooser, rules, equivariant)``."""
    _CHOOSER_FACTORIES[prefix] = factory


def resolve_for_model(spec: str, *, timeout: float = 10.0) -> ResolvedForModel:
    """Resolve ``spec``: a toy assignor, a registered chooser prefix, or any
    :func:`rebalproof.model.assignors.spec.resolve` spec (built-in, ``py:``, ``exec:``)."""
    spec = (spec or "").strip()
    name, _, options = spec.partition(":")
    if name in TOY_ASSIGNORS:
        from rebalproof.model.toy_assignors import NaiveLearner, RoundRobin

        if name in ("round-robin", "balanced-choices"):
            if options:
                raise InputError(f"{name} takes no options")
            if name == "balanced-choices":
                from rebalproof.model.toy_assignors import BalancedChoices

                return ResolvedForModel(assignor=BalancedChoices(), name=spec, rules=None, equivariant=True, kind="toy")
            return ResolvedForModel(assignor=RoundRobin(), name=spec, rules=None, equivariant=False, kind="toy")
        opts = dict(part.split("=", 1) for part in options.split(",") if "=" in part) if options else {}
        bad = set(opts) - {"learners_to"}
        if bad or (options and not opts):
            raise InputError(f"learner-naive takes learners_to=any|new|none, got '{options}'")
        try:
            chooser = NaiveLearner(learners_to=opts.get("learners_to", "any"))
        except ValueError as exc:
            raise InputError(str(exc)) from None
        return ResolvedForModel(assignor=chooser, name=spec, rules="learner", equivariant=False, kind="toy")
    for prefix, factory in _CHOOSER_FACTORIES.items():
        if spec.startswith(prefix):
            chooser, rules, equivariant = factory(spec[len(prefix):])
            return ResolvedForModel(assignor=chooser, name=spec, rules=rules, equivariant=equivariant, kind="chooser")
    from rebalproof.model.assignors import builtin
    from rebalproof.model.assignors.spec import resolve

    resolved = resolve(spec, timeout=timeout)
    equivariant = None
    rules = resolved.rules
    if resolved.kind == "builtin":
        equivariant = builtin(name).equivariant
    elif resolved.kind in ("py", "exec"):
        rules = rules or EXTERNAL_RULES
    return ResolvedForModel(
        assignor=resolved, name=spec, rules=rules, equivariant=equivariant, closer=resolved.close, kind=resolved.kind
    )


def _spec_chooser(rest: str):
    """``spec:ha`` (solver issue): every assignment the rules allow, one successor each.

    Past the enumeration cap the solver raises ``SpecTooLarge``; the group model reports it as
    a finding of the ``assignor-answers`` property at that rebalance (lower the bounds)."""
    from rebalproof.solver.spec import resolve_spec

    chooser = resolve_spec("spec:" + rest)
    return chooser, chooser.rules, chooser.equivariant


register_chooser("spec:", _spec_chooser)
