"""The batch oracle: judge a corpus of (input, answer) pairs and summarise by property.

A corpus is a JSON Lines file, one record per line::

    {"input": <RebalanceInput>, "output": <Assignment>}
    {"input": ..., "output": ..., "name": "prod-2024-05-01T10:00 rebalance 3"}

(``name`` is an optional label shown in reports; blank lines are skipped.) Each record is
judged by :func:`rebalproof.oracle.check` exactly as ``rebalproof oracle INPUT OUTPUT`` judges
one pair, and the verdicts are summed per property: how many lines hold, are violated, are
inconclusive or not promised, with the **first** violating line (the earliest) and the
**worst** (the violation naming the most tasks and instances; the earliest among equals).

A line that is not JSON, not a record of that shape, or whose input or answer breaks the
contract (unknown fields, an answer naming ids its input does not) is an
:class:`~rebalproof.errors.InputError` naming the line number, as a bad file is for the
single-pair oracle: a corpus is data the user controls.

The pieces are kept apart for the Spark engine (:mod:`rebalproof.pipeline`), which runs the
same per-line function at scale: :func:`check_line` is a pure top-level function of one line's
text, returning a small picklable :class:`LineResult`; :class:`CorpusTally` adds results one by
one and merges with another tally (associative, commutative up to which of two equal
"first"/"worst" lines is kept: the smaller line number wins), so partitions can be reduced in
any order; :meth:`CorpusTally.report` gives the :class:`CorpusReport`.

Examples
--------
>>> import json
>>> record = {"input": {"tasks": [{"id": "0_0"}], "members": [{"id": "I1"}, {"id": "I2"}]},
...           "output": {"assignment": {"I1": {"active": ["0_0"]}, "I2": {"active": ["0_0"]}}}}
>>> result = check_line(json.dumps(record), line_no=3)
>>> result.violated
('one-active',)
>>> report = CorpusTally(rules="ha").add(result).report(source="corpus.jsonl")
>>> report.ok, report.summary("one-active").violated, report.summary("one-active").first.line
(False, 1, 3)
>>> check_line("{not json", line_no=7)
Traceback (most recent call last):
...
rebalproof.errors.InputError: line 7: not valid JSON: Expecting property name enclosed in double quotes at column 2
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable

from rebalproof.errors import InputError
from rebalproof.oracle import check
from rebalproof.properties.catalogue import PER_ASSIGNMENT, check_rules
from rebalproof.properties.verdict import Status

__all__ = ["LineResult", "Example", "PropertySummary", "CorpusTally", "CorpusReport", "check_line", "check_corpus", "RECORD_FIELDS"]

RECORD_FIELDS = ("input", "output", "name")


@dataclass(frozen=True, kw_only=True, slots=True)
class Example:
    """One line where a property is violated, with what the verdict said."""

    line: int
    message: str
    name: str | None = None
    weight: int = 0  # tasks + instances the verdict names: the measure of "worst"

    def to_json(self) -> dict:
        out = {"line": self.line, "message": self.message, "weight": self.weight}
        if self.name is not None:
            out["name"] = self.name
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class LineResult:
    """The oracle's verdicts on one corpus line, reduced to what the summary needs."""

    line: int
    name: str | None
    statuses: tuple[tuple[str, str], ...]  # (property, status value), catalogue order
    examples: tuple[tuple[str, Example], ...] = ()  # (property, example) per violated property

    @property
    def violated(self) -> tuple[str, ...]:
        return tuple(p for p, s in self.statuses if s == Status.VIOLATED.value)

    @property
    def ok(self) -> bool:
        return not self.violated


def _record(text: str, where: str) -> dict:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not valid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(obj, dict):
        raise InputError(f'{where}: must be a JSON object {{"input": ..., "output": ...}}, got {type(obj).__name__}')
    unknown = [k for k in obj if k not in RECORD_FIELDS]
    if unknown:
        raise InputError(f"{where}: unknown field '{unknown[0]}'; a record has {', '.join(RECORD_FIELDS)}")
    for key in ("input", "output"):
        if key not in obj:
            raise InputError(f'{where}: missing "{key}"; a record is {{"input": RebalanceInput, "output": Assignment}}')
    if "name" in obj and not isinstance(obj["name"], str):
        raise InputError(f'{where}: "name" must be a string')
    return obj


def check_line(text: str, *, rules: str = "ha", line_no: int = 1) -> LineResult:
    """Judge one corpus line (its JSON text); pure, so the Spark engine can map it over lines.

    Raises
    ------
    InputError
        When the line is not a record in the contract's shape; the message starts with
        ``line N:``.
    """
    where = f"line {line_no}"
    obj = _record(text, where)
    try:
        report = check(obj["input"], obj["output"], rules=rules)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    examples = tuple(
        (v.property, Example(line=line_no, name=obj.get("name"), message=v.message, weight=len(v.tasks) + len(v.members)))
        for v in report.violations
    )
    return LineResult(
        line=line_no,
        name=obj.get("name"),
        statuses=tuple((v.property, v.status.value) for v in report.verdicts),
        examples=examples,
    )


def _earlier(a: Example | None, b: Example | None) -> Example | None:
    if a is None or (b is not None and b.line < a.line):
        return b
    return a


def _worse(a: Example | None, b: Example | None) -> Example | None:
    if a is None or (b is not None and (b.weight, -b.line) > (a.weight, -a.line)):
        return b
    return a


@dataclass(frozen=True, kw_only=True, slots=True)
class PropertySummary:
    """One property over the corpus: counts per status and the first and worst violations."""

    property: str
    holds: int = 0
    violated: int = 0
    inconclusive: int = 0
    not_promised: int = 0
    first: Example | None = None
    worst: Example | None = None

    def merge(self, other: "PropertySummary") -> "PropertySummary":
        return PropertySummary(
            property=self.property,
            holds=self.holds + other.holds,
            violated=self.violated + other.violated,
            inconclusive=self.inconclusive + other.inconclusive,
            not_promised=self.not_promised + other.not_promised,
            first=_earlier(self.first, other.first),
            worst=_worse(self.worst, other.worst),
        )

    def to_json(self) -> dict:
        out = {
            "property": self.property,
            "holds": self.holds,
            "violated": self.violated,
            "inconclusive": self.inconclusive,
            "not_promised": self.not_promised,
        }
        if self.first is not None:
            out["first"] = self.first.to_json()
            out["worst"] = self.worst.to_json()
        return out


_FIELD = {
    Status.HOLDS.value: "holds",
    Status.VIOLATED.value: "violated",
    Status.INCONCLUSIVE.value: "inconclusive",
    Status.NOT_PROMISED.value: "not_promised",
}


@dataclass(frozen=True, kw_only=True)
class CorpusTally:
    """A running sum of :class:`LineResult`; ``add`` and ``merge`` return new tallies."""

    rules: str
    lines: int = 0
    ok_lines: int = 0
    properties: tuple[PropertySummary, ...] = field(default=())

    def __post_init__(self):
        check_rules(self.rules)
        if not self.properties:
            object.__setattr__(self, "properties", tuple(PropertySummary(property=p.name) for p in PER_ASSIGNMENT))

    def add(self, result: LineResult) -> "CorpusTally":
        examples = dict(result.examples)
        statuses = dict(result.statuses)
        merged = []
        for summary in self.properties:
            status = statuses.get(summary.property)
            if status is None:
                merged.append(summary)
                continue
            one = PropertySummary(property=summary.property, first=examples.get(summary.property), worst=examples.get(summary.property))
            one = replace(one, **{_FIELD[status]: 1})
            merged.append(summary.merge(one))
        return replace(self, lines=self.lines + 1, ok_lines=self.ok_lines + result.ok, properties=tuple(merged))

    def merge(self, other: "CorpusTally") -> "CorpusTally":
        if other.rules != self.rules:
            raise InputError(f"cannot merge tallies judged by the {self.rules} and the {other.rules} rules")
        return replace(
            self,
            lines=self.lines + other.lines,
            ok_lines=self.ok_lines + other.ok_lines,
            properties=tuple(a.merge(b) for a, b in zip(self.properties, other.properties)),
        )

    def report(self, *, source: str) -> "CorpusReport":
        return CorpusReport(source=source, rules=self.rules, lines=self.lines, ok_lines=self.ok_lines, properties=self.properties)


@dataclass(frozen=True, kw_only=True)
class CorpusReport:
    """Violations of a corpus summarised by property, in catalogue order."""

    source: str
    rules: str
    lines: int  # records judged
    ok_lines: int  # records with no violated property
    properties: tuple[PropertySummary, ...]

    @property
    def ok(self) -> bool:
        """True when no line violates any property (an empty corpus is ok, and says so)."""
        return self.ok_lines == self.lines

    @property
    def violations(self) -> tuple[PropertySummary, ...]:
        """The properties violated on at least one line."""
        return tuple(s for s in self.properties if s.violated)

    def summary(self, name: str) -> PropertySummary:
        for s in self.properties:
            if s.property == name:
                return s
        raise KeyError(name)

    def to_json(self) -> dict:
        return {
            "source": self.source,
            "rules": self.rules,
            "lines": self.lines,
            "ok_lines": self.ok_lines,
            "ok": self.ok,
            "violations": [s.property for s in self.violations],
            "properties": [s.to_json() for s in self.properties],
        }

    def rows(self) -> list[list[str]]:
        """Table rows: property, holds, violated, inconclusive, not promised, first line, worst line."""
        def at(example: Example | None) -> str:
            return "-" if example is None else str(example.line)

        return [
            [s.property, str(s.holds), str(s.violated), str(s.inconclusive), str(s.not_promised), at(s.first), at(s.worst)]
            for s in self.properties
        ]

    def lines_text(self) -> tuple[str, ...]:
        """Per violated property: the first and the worst line with their messages; then one summary line."""
        out = []
        for s in self.violations:
            label = lambda e: f"line {e.line}" + (f" ({e.name})" if e.name else "")  # noqa: E731
            out.append(f"violated: {s.property} on {s.violated} of {self.lines} lines; first {label(s.first)}: {s.first.message}")
            if s.worst.line != s.first.line:
                out.append(f"  worst {label(s.worst)}: {s.worst.message}")
        if self.lines == 0:
            out.append(f"ok: {self.source} holds no records (nothing was judged)")
        elif self.violations:
            out.append(
                f"violated: {', '.join(s.property for s in self.violations)} "
                f"({self.lines - self.ok_lines} of {self.lines} lines violate a property)"
            )
        else:
            out.append(f"ok: every promised property holds on all {self.lines} lines")
        return tuple(out)


def _lines(path: Path) -> Iterable[tuple[int, str]]:
    try:
        handle = path.open(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"corpus '{path}' does not exist; check the path") from None
    except IsADirectoryError:
        raise InputError(f"corpus '{path}' is a directory; give a JSON Lines file") from None
    except OSError as exc:
        raise InputError(f"cannot read corpus '{path}': {exc.strerror or exc}") from None
    with handle:
        line_no = 0
        try:
            for line_no, text in enumerate(handle, start=1):
                if text.strip():
                    yield line_no, text
        except UnicodeDecodeError as exc:
            raise InputError(f"corpus '{path}' line {line_no + 1}: not UTF-8 text ({exc.reason})") from None


def check_corpus(path: str | os.PathLike, *, rules: str = "ha") -> CorpusReport:
    """Judge every record of the JSON Lines file at ``path`` and summarise by property.

    Parameters
    ----------
    path : path-like
        One ``{"input": ..., "output": ...}`` record per line.
    rules : str, keyword-only
        The rule set to judge by (as for :func:`rebalproof.oracle.check`).

    Raises
    ------
    InputError
        When the file cannot be read or a line is malformed; the message names the file and
        the line number.
    """
    path = Path(path)
    tally = CorpusTally(rules=check_rules(rules))
    for line_no, text in _lines(path):
        try:
            tally = tally.add(check_line(text, rules=rules, line_no=line_no))
        except InputError as exc:
            raise InputError(f"corpus '{path}' {exc}") from None
    return tally.report(source=str(path))
