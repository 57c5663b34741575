"""Assignors: pure functions from the leader's view (:class:`RebalanceInput`) to an :class:`Assignment`.

This is the seam everything turns on (docs/DESIGN.md "Architecture"): built-in assignors, the
solver's spec-allowed assignments and external implementations all plug in here.

A built-in assignor is registered with :func:`register` as :class:`AssignorInfo`: its name,
the seed section it implements, the property set it promises (``rules``), whether it is
equivariant under renaming instances/tasks (only then may the explorer reduce by symmetry),
and options it accepts (``learner:version=1,imbalance=0.2``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from rebalproof.errors import InputError
from rebalproof.model.assignment import Assignment
from rebalproof.model.view import RebalanceInput

__all__ = ["Assignor", "AssignorInfo", "register", "builtin", "builtin_names", "parse_options"]

Assignor = Callable[[RebalanceInput], Assignment]


@dataclass(frozen=True, kw_only=True)
class AssignorInfo:
    """A built-in assignor as named data."""

    name: str
    summary: str
    seed: str  # the seed section it implements, e.g. "002 Assignment Algorithm"
    make: Callable[..., Assignor]  # make(**options) -> assignor
    rules: str  # which protocol's promises it is judged by: "ha", "learner", "sticky"
    equivariant: bool = False
    options: Mapping[str, type] = field(default_factory=dict)


_REGISTRY: dict[str, AssignorInfo] = {}


def register(info: AssignorInfo) -> AssignorInfo:
    _REGISTRY[info.name] = info
    return info


def _load_builtins() -> None:
    # Importing the modules registers them; kept lazy so that this package imports fast. Not
    # "if _REGISTRY": importing one module first (``assignors.ha``) registers only that one.
    from rebalproof.model.assignors import eager, ha, learner, sticky  # noqa: F401


def builtin_names() -> tuple[str, ...]:
    _load_builtins()
    return tuple(sorted(_REGISTRY))


def builtin(name: str) -> AssignorInfo:
    """The built-in assignor called ``name``; an :class:`InputError` listing the names otherwise."""
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise InputError(
            f"unknown assignor '{name}'; built-in ones are {', '.join(builtin_names())}, "
            "or give py:module:function or exec:COMMAND"
        ) from None


def parse_options(info: AssignorInfo, text: str) -> dict:
    """``key=value,key=value`` -> typed options for ``info.make``."""
    options: dict = {}
    if not text:
        return options
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in info.options:
            known = ", ".join(f"{k}=<{t.__name__}>" for k, t in info.options.items()) or "none"
            raise InputError(f"assignor '{info.name}' does not take option '{part}'; its options are {known}")
        kind = info.options[key]
        try:
            options[key] = kind(value.strip())
        except ValueError:
            raise InputError(f"option {key} of assignor '{info.name}' must be a {kind.__name__}, got '{value}'") from None
    return options
