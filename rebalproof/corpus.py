"""The batch oracle: judge a corpus of (input, answer) pairs and summarise by property.

A corpus is a JSON Lines file, one record per line (or its ``.jsonl.gz``, or a directory of
``*.json`` records: :mod:`rebalproof.corpus_source`)::

    {"input": <RebalanceInput>, "output": <Assignment>}
    {"input": ..., "output": ..., "name": "prod-2024-05-01T10:00 rebalance 3"}
    {"input": ..., "output": ..., "id": 1234, "group": "billing", "recorded_at": "2024-05-01T10:00Z"}

``name`` (a string) or else ``id`` (a string or a whole number) labels the line in reports; any
other key is metadata the recording tool added (a timestamp, a group id, a scenario name): it is
ignored, and the report counts on how many lines each ignored key was found. Blank lines are
skipped. A corpus with no record at all is an :class:`~rebalproof.errors.InputError` unless
``allow_empty`` (``--allow-empty``): a CI job whose recording step broke must not pass. Each record is
judged by :func:`rebalproof.oracle.check` exactly as ``rebalproof oracle INPUT OUTPUT`` judges
one pair, and the verdicts are summed per property: how many lines hold, are violated, are
inconclusive or not promised, with the **first** violating line (the earliest) and the
**worst** (the violation naming the most tasks and instances; the earliest among equals).

A line that is not JSON (read by :func:`rebalproof.reading.parse_json`: size, nesting, number,
duplicate-key and encoding limits), not a record of that shape, or whose input breaks the
contract (unknown fields, a member holding a task twice) is an
:class:`~rebalproof.errors.InputError` naming the line number, as a bad file is for the
single-pair oracle: a corpus is data the user controls. A record whose *answer* is not an
assignment for its input (not in the contract's shape, naming a member or task its input does
not, leaving out an input member) is the recorded assignor's doing: a *finding* counted as a
malformed answer (the first such line is shown with what is wrong), never a usage error, and the
corpus is not ok.

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
rebalproof.errors.InputError: line 7: not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field, replace

from rebalproof.corpus_source import Entry, entries
from rebalproof.errors import InputError
from rebalproof.model.codec import decode_assignment, decode_input
from rebalproof.oracle import check
from rebalproof.properties.catalogue import PER_ASSIGNMENT, check_rules
from rebalproof.properties.verdict import Status
from rebalproof.reading import parse_json

__all__ = [
    "LineResult",
    "Example",
    "PropertySummary",
    "CorpusTally",
    "CorpusReport",
    "check_line",
    "check_entry",
    "check_corpus",
    "require_records",
    "record_label",
    "RECORD_FIELDS",
]

RECORD_FIELDS = ("input", "output", "name", "id")  # the keys read; any other key is ignored and counted


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
    ignored: tuple[str, ...] = ()  # the record's keys that are not RECORD_FIELDS, sorted
    malformed: Example | None = None  # the answer is no assignment for its input (a finding; no statuses)

    @property
    def violated(self) -> tuple[str, ...]:
        return tuple(p for p, s in self.statuses if s == Status.VIOLATED.value)

    @property
    def ok(self) -> bool:
        return not self.violated and self.malformed is None


_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}


def _record(data: str | bytes, where: str, offset: int = 0) -> dict:
    obj = parse_json(data, where=where, offset=offset)
    if not isinstance(obj, dict):
        kind = _JSON_TYPES.get(type(obj), "a number")
        raise InputError(f'{where}: must be a JSON object {{"input": ..., "output": ...}}, got {kind}')
    for key in ("input", "output"):
        if key not in obj:
            raise InputError(f'{where}: missing "{key}"; a record is {{"input": RebalanceInput, "output": Assignment}}')
    if "name" in obj and not isinstance(obj["name"], str):
        raise InputError(f'{where}: "name" must be a string (the label shown in reports)')
    if "id" in obj and (isinstance(obj["id"], bool) or not isinstance(obj["id"], (str, int))):
        raise InputError(f'{where}: "id" must be a string or a whole number (it labels the line when there is no "name")')
    return obj


def record_label(obj: dict, default: str | None) -> str | None:
    """A record's label: its ``name``, else its ``id`` (as text), else ``default`` (a file name)."""
    if "name" in obj:
        return obj["name"]
    if "id" in obj:
        return str(obj["id"])
    return default


def check_line(data: str | bytes, *, rules: str = "ha", line_no: int = 1, where: str | None = None,
               label: str | None = None, offset: int = 0) -> LineResult:
    """Judge one corpus record (its JSON text); pure, so the Spark engine can map it over lines.

    Parameters
    ----------
    data : str or bytes
        The record's JSON (bytes are decoded as UTF-8).
    line_no : int, keyword-only
        Its number in the corpus (a line, or a file of a directory corpus).
    where, label, offset : keyword-only
        How messages name it (default ``line N``), its label when the record has no ``name``
        or ``id``, and where it starts in its file (for the byte offset of an encoding error).

    Raises
    ------
    InputError
        When the line is not a record in the contract's shape; the message starts with
        ``where`` (``line N:``).
    """
    where = where or f"line {line_no}"
    obj = _record(data, where, offset)
    try:
        view = decode_input(obj["input"])
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    name = record_label(obj, label)
    ignored = tuple(sorted(k for k in obj if k not in RECORD_FIELDS))
    try:
        answer = decode_assignment(obj["output"], view)
    except InputError as exc:  # the recorded assignor's answer, not the user's mistake: a finding
        finding = Example(line=line_no, name=name, message=f"the answer is no assignment for its input: {exc}")
        return LineResult(line=line_no, name=name, statuses=(), ignored=ignored, malformed=finding)
    report = check(view, answer, rules=rules)
    examples = tuple(
        (v.property, Example(line=line_no, name=name, message=v.message, weight=len(v.tasks) + len(v.members)))
        for v in report.violations
    )
    return LineResult(
        line=line_no,
        name=name,
        statuses=tuple((v.property, v.status.value) for v in report.verdicts),
        examples=examples,
        ignored=ignored,
    )


def check_entry(entry: Entry, *, rules: str = "ha") -> LineResult:
    """:func:`check_line` on one :class:`~rebalproof.corpus_source.Entry` (a reading problem raises)."""
    if entry.problem is not None:
        raise InputError(f"{entry.where}: {entry.problem}")
    return check_line(entry.data, rules=rules, line_no=entry.number, where=entry.where, label=entry.label, offset=entry.offset)


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
    ignored: tuple[tuple[str, int], ...] = ()  # (ignored key, lines carrying it), sorted by key
    malformed: int = 0  # lines whose answer is no assignment for their input (findings)
    first_malformed: Example | None = None

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
        return replace(self, lines=self.lines + 1, ok_lines=self.ok_lines + result.ok, properties=tuple(merged),
                       ignored=_sum_counts(self.ignored, tuple((key, 1) for key in result.ignored)),
                       malformed=self.malformed + (result.malformed is not None),
                       first_malformed=_earlier(self.first_malformed, result.malformed))

    def merge(self, other: "CorpusTally") -> "CorpusTally":
        if other.rules != self.rules:
            raise InputError(f"cannot merge tallies judged by the {self.rules} and the {other.rules} rules")
        return replace(
            self,
            lines=self.lines + other.lines,
            ok_lines=self.ok_lines + other.ok_lines,
            properties=tuple(a.merge(b) for a, b in zip(self.properties, other.properties)),
            ignored=_sum_counts(self.ignored, other.ignored),
            malformed=self.malformed + other.malformed,
            first_malformed=_earlier(self.first_malformed, other.first_malformed),
        )

    def report(self, *, source: str) -> "CorpusReport":
        return CorpusReport(source=source, rules=self.rules, lines=self.lines, ok_lines=self.ok_lines, properties=self.properties,
                            ignored=self.ignored, malformed=self.malformed, first_malformed=self.first_malformed)


def _sum_counts(a: tuple[tuple[str, int], ...], b: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    if not b:
        return a
    total = Counter(dict(a))
    total.update(dict(b))
    return tuple(sorted(total.items()))


_SHOWN_KEYS = 5


@dataclass(frozen=True, kw_only=True)
class CorpusReport:
    """Violations of a corpus summarised by property, in catalogue order."""

    source: str
    rules: str
    lines: int  # records judged
    ok_lines: int  # records with no violated property
    properties: tuple[PropertySummary, ...]
    ignored: tuple[tuple[str, int], ...] = ()  # (ignored key, lines carrying it), sorted by key
    malformed: int = 0  # lines whose answer is no assignment for their input (findings)
    first_malformed: Example | None = None

    @property
    def ok(self) -> bool:
        """True when no line violates any property nor answers malformed (an empty corpus is ok, and says so)."""
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
            "ignored_keys": dict(self.ignored),
            "malformed_answers": self.malformed,
            **({"first_malformed": self.first_malformed.to_json()} if self.first_malformed is not None else {}),
        }

    def header(self) -> str:
        """The table's title: the source, how many lines were judged, and the keys ignored (if any)."""
        head = f"{self.source}: {self.lines} {'line' if self.lines == 1 else 'lines'} judged by the {self.rules} rules"
        if not self.ignored:
            return head
        shown = [f"{key} ({count} {'line' if count == 1 else 'lines'})" for key, count in self.ignored[:_SHOWN_KEYS]]
        more = len(self.ignored) - _SHOWN_KEYS
        if more > 0:
            shown.append(f"and {more} more")
        return f"{head}; extra keys ignored: {', '.join(shown)}"

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
        if self.malformed:
            e = self.first_malformed
            out.append(f"finding: {self.malformed} of {self.lines} lines answer no assignment for their input; "
                       f"first line {e.line}" + (f" ({e.name})" if e.name else "") + f": {e.message}")
        if self.lines == 0:
            out.append(f"ok: {self.source} holds no records (nothing was judged)")
        elif self.violations:
            out.append(
                f"violated: {', '.join(s.property for s in self.violations)} "
                f"({self.lines - self.ok_lines} of {self.lines} lines violate a property or answer malformed)"
                if self.malformed else
                f"violated: {', '.join(s.property for s in self.violations)} "
                f"({self.lines - self.ok_lines} of {self.lines} lines violate a property)"
            )
        elif self.malformed:
            out.append(f"finding: malformed answers on {self.malformed} of {self.lines} lines (no property violated on the others)")
        elif undecided := [s.property for s in self.properties if s.inconclusive]:
            out.append(f"ok: nothing violated on {self.lines} {'line' if self.lines == 1 else 'lines'}, but undecided on some: {', '.join(undecided)}")
        else:
            out.append(f"ok: every promised property holds on all {self.lines} lines")
        return tuple(out)


def require_records(report: CorpusReport, *, allow_empty: bool) -> CorpusReport:
    """``report``, or an :class:`InputError` when it judged nothing and that was not allowed."""
    if report.lines == 0 and not allow_empty:
        raise InputError(
            f"corpus '{report.source}' holds no records (it is empty or only blank lines): if a recording step wrote it, "
            "that step may have failed; pass --allow-empty to accept an empty corpus"
        )
    return report


def check_corpus(path: str | os.PathLike, *, rules: str = "ha", allow_empty: bool = False) -> CorpusReport:
    """Judge every record of the corpus at ``path`` and summarise by property.

    Parameters
    ----------
    path : path-like
        A JSON Lines file (one ``{"input": ..., "output": ...}`` record per line), its
        ``.jsonl.gz``, or a directory of ``*.json`` records (:mod:`rebalproof.corpus_source`).
    rules : str, keyword-only
        The rule set to judge by (as for :func:`rebalproof.oracle.check`).
    allow_empty : bool, keyword-only
        Accept a corpus without records (the report then says nothing was judged).

    Raises
    ------
    InputError
        When the corpus cannot be read, a line is malformed (the message names the file and
        the line number), or it holds no record and ``allow_empty`` is false.
    """
    tally = CorpusTally(rules=check_rules(rules))
    for entry in entries(path):
        try:
            tally = tally.add(check_entry(entry, rules=rules))
        except InputError as exc:
            raise InputError(f"corpus '{path}' {exc}") from None
    return require_records(tally.report(source=str(path)), allow_empty=allow_empty)
