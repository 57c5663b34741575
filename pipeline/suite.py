"""Verification suites: which checks ``rebalproof verify`` runs and what each is expected to give.

A suite is a TOML file (data only, like the scenario files: numbers, booleans, names) with:

``[suite]``
    ``name`` and ``description``.
``[[check]]`` (any number)
    one model check: ``name``, ``protocol`` (``cooperative``, ``learner:partial_rebalance=true``,
    ...), ``assignor`` (a built-in with options, a toy, ``py:``/``exec:``), optional ``rules``,
    ``symmetry`` (``declared``/``on``/``off``/``auto``; default: the assignor's own), ``time_limit`` (seconds),
    ``por`` (``on``/``off``: partial-order reduction as ``check --por``; default ``off`` here, so the
    suite's pinned counts are those of every interleaving), ``bounds`` (a table of
    :class:`~rebalproof.model.group_bounds.Bounds` fields, e.g. ``capacities = [1, 2]`` for
    stream threads per instance), and the expectations:
    ``not_promised`` — the run properties this pair does not promise (recorded, and compared
    with what the code says: a change of promise shows up), and ``known`` — a table from a
    property to ``"<status>: <why>"`` for the verdicts known to differ from "holds", e.g.
    ``scale-down-completes = "violated: KIP-429 v1 has no leaving members"``.
``[rebalances]``
    the per-rebalance section: ``assignors`` (specs), ``generated`` (how many generated views
    beside the seeds' views), ``seed``, ``rules`` (for ``py:``/``exec:`` assignors),
    ``not_promised`` — per assignor spec, the per-assignment properties its rule set does not
    promise (recorded and compared, as for checks), and ``known`` — per assignor spec, a table
    from per-assignment property to why it is violated.

Every verdict is then one of: *pass* (as expected), *expected finding* (a known violation,
seen again), or unexpected — *regression* (expected to hold, violated), *fixed* (a known
violation that no longer shows: update the suite), *promise changed*, *inconclusive*, *error*.
``rebalproof verify`` exits 1 on any unexpected outcome.

Examples
--------
>>> suite = load_suite(DEFAULT_SUITE)
>>> suite.name, len(suite.checks) > 5
('default', True)
>>> classify("holds", Expectation(status="holds"))
'pass'
>>> classify("violated", Expectation(status="holds"))
'regression'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rebalproof.errors import InputError
from rebalproof.reading import read_toml_file

__all__ = [
    "DEFAULT_SUITE",
    "STATUSES",
    "OUTCOMES",
    "UNEXPECTED",
    "Expectation",
    "CheckSpec",
    "RebalanceSpec",
    "Suite",
    "load_suite",
    "parse_suite",
    "classify",
]

DEFAULT_SUITE = Path(__file__).with_name("default_suite.toml")
STATUSES = ("holds", "violated", "inconclusive", "not promised")
OUTCOMES = ("pass", "expected finding", "regression", "fixed", "promise changed", "inconclusive", "error")
UNEXPECTED = frozenset(OUTCOMES) - {"pass", "expected finding"}

_SUITE_KEYS = ("name", "description")
_CHECK_KEYS = ("name", "protocol", "assignor", "rules", "symmetry", "time_limit", "por", "bounds", "not_promised", "known")
_REBALANCE_KEYS = ("assignors", "generated", "seed", "rules", "not_promised", "known")
_TOP_KEYS = ("suite", "check", "rebalances")
_RULES = ("ha", "learner", "sticky", "eager", "none")


@dataclass(frozen=True, kw_only=True)
class Expectation:
    """The verdict a suite expects for one property, and why when it is not "holds"."""

    status: str
    why: str = ""


@dataclass(frozen=True, kw_only=True)
class CheckSpec:
    """One model check of a suite (see the module docstring); ``bounds`` as (field, value) pairs."""

    name: str
    protocol: str
    assignor: str
    rules: str | None = None
    symmetry: str | None = None  # None: the assignor's default mode (declared for built-ins, auto for py:/exec:)
    time_limit: float | None = None
    por: bool = False  # partial-order reduction (rebalproof.model.group_por)
    bounds: tuple[tuple[str, object], ...] = ()
    not_promised: tuple[str, ...] | None = None
    known: tuple[tuple[str, Expectation], ...] = ()

    def expect(self, prop: str, observed: str) -> Expectation:
        """What the suite expects for ``prop``; with no ``not_promised`` list, the code's promise."""
        known = dict(self.known)
        if prop in known:
            return known[prop]
        if self.not_promised is not None:
            return Expectation(status="not promised" if prop in self.not_promised else "holds")
        return Expectation(status="not promised" if observed == "not promised" else "holds")

    def to_json(self) -> dict:
        out = {"name": self.name, "protocol": self.protocol, "assignor": self.assignor, "bounds": dict(self.bounds)}
        if self.rules is not None:
            out["rules"] = self.rules
        if self.symmetry is not None:
            out["symmetry"] = self.symmetry
        if self.time_limit is not None:
            out["time_limit"] = self.time_limit
        if self.por:
            out["por"] = "on"
        if self.not_promised is not None:
            out["not_promised"] = list(self.not_promised)
        if self.known:
            out["known"] = {p: f"{e.status}: {e.why}" for p, e in self.known}
        return out


@dataclass(frozen=True, kw_only=True)
class RebalanceSpec:
    """The per-rebalance section: assignors over the seeds' and generated leader views."""

    assignors: tuple[str, ...] = ()
    generated: int = 200
    seed: int = 0
    rules: str = "ha"
    not_promised: tuple[tuple[str, tuple[str, ...]], ...] = ()
    known: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()

    def known_for(self, assignor: str) -> dict[str, str]:
        return dict(dict(self.known).get(assignor, ()))

    def not_promised_for(self, assignor: str) -> tuple[str, ...] | None:
        """The recorded non-promises of ``assignor``; None when the suite records none."""
        return dict(self.not_promised).get(assignor)


@dataclass(frozen=True, kw_only=True)
class Suite:
    name: str
    description: str = ""
    checks: tuple[CheckSpec, ...] = ()
    rebalances: RebalanceSpec = field(default_factory=RebalanceSpec)
    path: str = ""


def classify(observed: str, expected: Expectation) -> str:
    """The outcome of one verdict against its expectation (one of :data:`OUTCOMES`)."""
    if observed == expected.status:
        return "expected finding" if observed == "violated" else "pass"
    if observed == "inconclusive":
        return "inconclusive"
    if expected.status == "violated" and observed == "holds":
        return "fixed"
    if "not promised" in (observed, expected.status):
        return "promise changed"
    return "regression"


def _table(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise InputError(f"must be a table, got {type(value).__name__}", where=where)
    return value


def _known_keys(table: dict, keys, where: str) -> None:
    for key in table:
        if key not in keys:
            raise InputError(f"unknown key '{key}'; the keys are {', '.join(keys)}", where=where)


def _text(value, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"must be a non-empty string, got {value!r}", where=where)
    return value.strip()


def _names(value, where: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError("must be a list of property names", where=where)
    for name in value:
        if name not in allowed:
            raise InputError(f"unknown property '{name}'; the properties are {', '.join(allowed)}", where=where)
    return tuple(value)


def _expectation(text, where: str) -> Expectation:
    text = _text(text, where)
    status, sep, why = text.partition(":")
    status = status.strip()
    if not sep or status not in STATUSES:
        raise InputError(f"must read '<status>: <why>' with a status among {', '.join(STATUSES)}, got {text!r}", where=where)
    return Expectation(status=status, why=why.strip())


def _run_property_names() -> tuple[str, ...]:
    from rebalproof.properties.run import property_names

    return property_names()


def _assignment_property_names() -> tuple[str, ...]:
    from rebalproof.properties import PER_ASSIGNMENT

    return tuple(p.name for p in PER_ASSIGNMENT)


def _check(raw, index: int, run_names: tuple[str, ...]) -> CheckSpec:
    from rebalproof.model.group_assignor import SYMMETRY_MODES
    from rebalproof.model.group_bounds import BOUND_FIELDS, Bounds
    from rebalproof.model.group_protocol import parse_protocol

    where = f"check[{index}]"
    raw = _table(raw, where)
    _known_keys(raw, _CHECK_KEYS, where)
    for key in ("name", "protocol", "assignor"):
        if key not in raw:
            raise InputError(f"every check needs '{key}'", where=where)
    name = _text(raw["name"], f"{where}.name")
    protocol = _text(raw["protocol"], f"{where}.protocol")
    parse_protocol(protocol)  # validates
    rules = raw.get("rules")
    if rules is not None and rules not in _RULES:
        raise InputError(f"rules must be one of {', '.join(_RULES)}, got {rules!r}", where=f"{where}.rules")
    symmetry = raw.get("symmetry")
    if symmetry is not None and symmetry not in SYMMETRY_MODES:
        raise InputError(f"symmetry must be one of {', '.join(SYMMETRY_MODES)}, got {symmetry!r}", where=f"{where}.symmetry")
    time_limit = raw.get("time_limit")
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or time_limit <= 0):
        raise InputError(f"time_limit must be a number of seconds above 0, got {time_limit!r}", where=f"{where}.time_limit")
    por = raw.get("por", "off")
    if por not in ("on", "off"):
        raise InputError(f"por must be \"on\" or \"off\" (partial-order reduction), got {por!r}", where=f"{where}.por")
    bounds = _table(raw.get("bounds", {}), f"{where}.bounds")
    _known_keys(bounds, BOUND_FIELDS, f"{where}.bounds")
    try:
        Bounds(**bounds)
    except InputError as exc:
        raise InputError(str(exc), where=where) from None
    not_promised = raw.get("not_promised")
    if not_promised is not None:
        not_promised = _names(not_promised, f"{where}.not_promised", run_names)
    known = _table(raw.get("known", {}), f"{where}.known")
    _names(list(known), f"{where}.known", run_names)
    return CheckSpec(
        name=name,
        protocol=protocol,
        assignor=_text(raw["assignor"], f"{where}.assignor"),
        rules=rules,
        symmetry=symmetry,
        time_limit=float(time_limit) if time_limit is not None else None,
        por=por == "on",
        bounds=tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in bounds.items())),
        not_promised=not_promised,
        known=tuple((p, _expectation(t, f"{where}.known.{p}")) for p, t in sorted(known.items())),
    )


def _rebalances(raw) -> RebalanceSpec:
    where = "rebalances"
    raw = _table(raw, where)
    _known_keys(raw, _REBALANCE_KEYS, where)
    assignors = raw.get("assignors", [])
    if not isinstance(assignors, list) or not all(isinstance(a, str) and a.strip() for a in assignors):
        raise InputError("must be a list of assignor specs", where=f"{where}.assignors")
    generated, seed = raw.get("generated", 200), raw.get("seed", 0)
    for key, value in (("generated", generated), ("seed", seed)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(f"must be a whole number of at least 0, got {value!r}", where=f"{where}.{key}")
    rules = raw.get("rules", "ha")
    if rules not in _RULES[:-1]:
        raise InputError(f"must be one of {', '.join(_RULES[:-1])}, got {rules!r}", where=f"{where}.rules")
    names = _assignment_property_names()
    not_promised = _table(raw.get("not_promised", {}), f"{where}.not_promised")
    recorded = tuple((spec, _names(props, f"{where}.not_promised.{spec}", names)) for spec, props in sorted(not_promised.items()))
    known = _table(raw.get("known", {}), f"{where}.known")
    entries = []
    for spec, table in sorted(known.items()):
        table = _table(table, f"{where}.known.{spec}")
        _names(list(table), f"{where}.known.{spec}", names)
        entries.append((spec, tuple((p, _text(why, f"{where}.known.{spec}.{p}")) for p, why in sorted(table.items()))))
    return RebalanceSpec(
        assignors=tuple(a.strip() for a in assignors),
        generated=generated,
        seed=seed,
        rules=rules,
        not_promised=recorded,
        known=tuple(entries),
    )


def parse_suite(data: dict, *, path: str = "") -> Suite:
    """A validated :class:`Suite` from the TOML document ``data``."""
    _known_keys(data, _TOP_KEYS, "suite file")
    head = _table(data.get("suite", {}), "suite")
    _known_keys(head, _SUITE_KEYS, "suite")
    run_names = _run_property_names()
    raw_checks = data.get("check", [])
    if not isinstance(raw_checks, list):
        raise InputError("write each check as a [[check]] table", where="check")
    checks = tuple(_check(raw, i, run_names) for i, raw in enumerate(raw_checks))
    seen = set()
    for check in checks:
        if check.name in seen:
            raise InputError(f"two checks are called '{check.name}'; give each a unique name", where="check")
        seen.add(check.name)
    return Suite(
        name=_text(head.get("name", Path(path).stem or "suite"), "suite.name"),
        description=str(head.get("description", "")),
        checks=checks,
        rebalances=_rebalances(data.get("rebalances", {})),
        path=path,
    )


def load_suite(path: str | Path) -> Suite:
    """Read and validate a suite file; every problem is an :class:`InputError` naming the place."""
    path = Path(path)
    data = read_toml_file(path, what="suite", missing="check the path (or give none for the default suite)")
    return parse_suite(data, path=str(path))
