"""Every answer ``check`` reaches, judged by the per-rebalance catalogue (issue #10 item 1).

A rebalance step of the group model is a leader view and one answer of the assignor
(:class:`~rebalproof.model.group_model.RebalanceStep`). Each distinct (view, answer) the
exploration reaches is judged once by the readings of
:data:`~rebalproof.properties.catalogue.PER_ASSIGNMENT` — the promise table ``oracle`` uses — and
the verdict is memoised. For every property the run reports:

- the number of distinct leader views (``violating_views``) on which some answer breaks it, of
  the views judged (``judged_views``);
- the oracle's own words for the first violating view in BFS order, and the rebalance edge that
  reached it (the shortest trace to it, built like any edge property's).

Which rule set is in force is the check's (``--rules``; a built-in's own; ``ha`` for
``py:``/``exec:``). With no rule set (``--rules none``, the toy round-robin) only what any
answer must be is promised: :data:`PROMISED_WITHOUT_RULES` (one active per task, no task twice on
an instance); the other properties are still judged and shown as *not promised* with what was
observed.

A view's verdict is inconclusive where the catalogue's is (``balanced`` past its search budget):
then the property is inconclusive for the run unless another view violates it.

The Spark engine runs one :class:`RebalanceJudge` per bucket with ``track_edges`` on and merges
:meth:`RebalanceJudge.records` of the edges the local explorer would have walked
(:meth:`RebalanceJudge.merge`), so counts and first discoveries are the local ones. Views are
identified across processes by a 64-bit BLAKE2 digest of the model's view key (its ``repr`` is
deterministic: tuples of strings, numbers, booleans and None).

Judging is the costly part, so a (view, answer) is judged once per *shape*: the pair with its
member ids renamed to their ranks in natural order (:func:`shape_of`). Verdicts must not depend
on naming (a rule of the project: none of the catalogue's readings looks at an id but to tell
members apart, to order them, or to name them in a message), and a renaming that keeps the order
keeps even tie-breaks by id. A shape judged clean is clean for every view of that shape; one that
breaks or leaves undecided a property is judged again on each view, so its messages name that
view's own members.
"""

from __future__ import annotations

from hashlib import blake2b

from rebalproof.model.names import id_key
from rebalproof.properties.catalogue import PER_ASSIGNMENT
from rebalproof.properties.stability import premise_holds
from rebalproof.properties.verdict import Status

__all__ = [
    "PROMISED_WITHOUT_RULES",
    "REBALANCE_NAMES",
    "RebalanceJudge",
    "shape_of",
    "promised",
    "promised_words",
    "judge_step",
    "run_verdict",
]

#: Promised with no rule set: what any answer must be, whatever the protocol's promises.
PROMISED_WITHOUT_RULES = frozenset({"one-active", "no-colocation"})

#: The per-rebalance properties, in catalogue order.
REBALANCE_NAMES = tuple(p.name for p in PER_ASSIGNMENT)

_BY_NAME = {p.name: p for p in PER_ASSIGNMENT}
_BIT = {name: 1 << i for i, name in enumerate(REBALANCE_NAMES)}


def promised(name: str, rules: str | None) -> bool:
    """Whether ``rules`` (None: no rule set) promises the per-rebalance property ``name``."""
    if rules is None:
        return name in PROMISED_WITHOUT_RULES
    return rules in _BY_NAME[name].promised_by


def promised_words(name: str) -> str:
    sets = [r for r in ("sticky", "eager", "learner", "ha") if r in _BY_NAME[name].promised_by]
    extra = ", and with no rule set" if name in PROMISED_WITHOUT_RULES else ""
    return f"the {'/'.join(sets)} rules{extra}, in every answer"


#: Readings that hold vacuously where a premise on the view alone fails, with a quick test of
#: that premise (the same answer as the reading's own premise): the judge keeps statuses only.
_PREMISE = {"fixpoint": premise_holds}
#: Above the catalogue's bits of a view's inconclusive mask: the views on which a property of
#: :data:`_PREMISE` could be violated (its premise met), so a run can say how often it was put to
#: the test (red team 10: at the sticky defaults ``fixpoint``'s premise is met on 2 of 36 views,
#: and a pass said nothing of it).
_MET = {name: 1 << (len(REBALANCE_NAMES) + i) for i, name in enumerate(_PREMISE)}
_VERDICT_BITS = (1 << len(REBALANCE_NAMES)) - 1


def _reading(name: str, rules: str | None):
    prop = _BY_NAME[name]
    return prop.checks_by_rules.get(rules or "ha", prop.check)


def judge_step(name: str, rules: str | None, step) -> str | None:
    """The oracle's words when ``step``'s answer breaks ``name`` under ``rules``, else None
    (the edge check a replayed trace re-runs)."""
    if step is None:
        return None
    verdict = _reading(name, rules)(step.view, step.assignment)
    return verdict.message if verdict.status is Status.VIOLATED else None


def _digest(key) -> int:
    return int.from_bytes(blake2b(repr(key).encode(), digest_size=8).digest(), "big")


def shape_of(view, assignment) -> int | None:
    """A 128-bit digest of ``(view, assignment)`` with member ids renamed to their ranks in natural
    order (:func:`~rebalproof.model.names.id_key`), or None when plain string order and natural
    order of the ids disagree (``I2``/``I10``: then no renaming keeps every order a reading might use).
    Everything else a reading looks at is kept as it is: the config and the tasks too (two views
    differing only in ``num_standby_replicas`` must not share a verdict)."""
    ids = {m.id for m in view.members} | set(view.previous_members or ()) | {m for m, _ in assignment.members}
    natural = sorted(ids, key=id_key)
    if natural != sorted(ids):
        return None
    rank = {m: i for i, m in enumerate(natural)}
    shape = (
        view.config,
        view.tasks,
        tuple((rank[m.id], m.capacity, m.leaving, m.active, m.standby, m.warmup, m.lags) for m in view.members),
        None if view.previous_members is None else tuple(rank[m] for m in view.previous_members),
        tuple((rank[m], x.active, x.standby, x.warmup) for m, x in assignment.members),
        assignment.probing_rebalance,
    )
    return int.from_bytes(blake2b(repr(shape).encode(), digest_size=16).digest(), "big")


class RebalanceJudge:
    """Judges each distinct (view, answer) once; keeps per view which properties it breaks."""

    def __init__(self, rules: str | None, names=REBALANCE_NAMES, *, track_edges: bool = False, by_shape: bool = True):
        self.rules = rules
        self.by_shape = by_shape
        self.names = tuple(n for n in REBALANCE_NAMES if n in set(names))
        self.track_edges = track_edges
        self._memo: dict = {}  # (view key, choice) -> (digest, violated mask, inconclusive mask, messages)
        self._clean: dict = {}  # shapes (:func:`shape_of`) judged to break and leave undecided nothing -> premise bits
        #: (view, answer) pairs judged by the catalogue (the rest were clean shapes already judged)
        self.judged = 0
        #: view digest -> (violated mask, inconclusive mask) over the answers judged on it
        self.views: dict[int, tuple[int, int]] = {}
        #: rebalance edge -> view digest (only with ``track_edges``: what a Spark bucket sends)
        self.edge_views: dict[int, int] = {}
        #: rebalance edge -> digests of the views judged beside it, not walked (the behind probes
        #: of its state: ``RunMonitor``), also only with ``track_edges``
        self.edge_probes: dict[int, list[int]] = {}
        #: expanded state -> digests of the views of the rebalances requested there, judged, not
        #: walked (:meth:`~rebalproof.model.group_model.GroupModel.requested_probes`), also only
        #: with ``track_edges`` (a Spark bucket's own positions)
        self.expanded_probes: dict[int, list[int]] = {}
        #: digests of the views of rebalances requested in quiescent states (any engine: the
        #: monitor notes each as it asks, :meth:`note_requested`; a Spark driver as it merges)
        self.requested: set[int] = set()

    def judge(self, edge: int, key, choice: int, step, *, beside: bool = False, expanded: int | None = None) -> list[tuple[str, str]]:
        """(property, message) for every property the answer of ``step`` breaks, in catalogue order.
        ``beside``: the view is judged beside ``edge``, not walked by it (a behind probe);
        ``expanded``: judged at the expansion of that state, not at an edge (a requested rebalance)."""
        digest, bad, unsure, messages = self.verdict(key, choice, step)
        self._note(digest, bad, unsure)
        if self.track_edges:
            if expanded is not None:
                self.expanded_probes.setdefault(expanded, []).append(digest)
            elif beside:
                self.edge_probes.setdefault(edge, []).append(digest)
            else:
                self.edge_views[edge] = digest
        return list(messages)

    def verdict(self, key, choice: int, step, *, keep: bool = True) -> tuple[int, int, int, tuple]:
        """(view digest, violated mask, inconclusive mask, messages) of the answer ``choice`` of
        ``step`` on the view of ``key``, memoised unless not ``keep`` (a caller that asks about
        each pair once; the memo by shape is kept) -- nothing noted: :meth:`judge` notes it per edge."""
        hit = self._memo.get((key, choice))
        if hit is None:
            shape = shape_of(step.view, step.assignment) if self.by_shape else None
            if shape is not None and shape in self._clean:
                hit = (_digest(key), 0, self._clean[shape], ())
            else:
                hit = (_digest(key), *self._judge(step))
                if shape is not None and not hit[1] and not hit[2] & _VERDICT_BITS:
                    self._clean[shape] = hit[2]  # a renaming keeps the premise too
            if keep:
                self._memo[(key, choice)] = hit
        return hit

    def _judge(self, step) -> tuple[int, int, tuple]:
        """(violated mask, inconclusive mask, messages) of the catalogue's readings on ``step``."""
        self.judged += 1
        bad = unsure = 0
        messages = []
        for name in self.names:
            premise = _PREMISE.get(name)
            if premise is not None:
                if not premise(step.view):
                    continue  # holds vacuously: no bit to set
                unsure |= _MET[name]
            verdict = _reading(name, self.rules)(step.view, step.assignment)
            if verdict.status is Status.VIOLATED:
                bad |= _BIT[name]
                messages.append((name, verdict.message))
            elif verdict.status is Status.INCONCLUSIVE:
                unsure |= _BIT[name]
        return bad, unsure, tuple(messages)

    def note_requested(self, key) -> None:
        """Count the view of ``key`` among the requested rebalances' (:attr:`requested`)."""
        self.requested.add(_digest(key))

    def _note(self, digest: int, bad: int, unsure: int) -> None:
        old = self.views.get(digest)
        self.views[digest] = (bad, unsure) if old is None else (old[0] | bad, old[1] | unsure)

    def records(self) -> tuple[dict, dict, dict, dict]:
        """(edge -> view digest, view digest -> masks, edge -> probed digests, expanded position ->
        requested digests): what a Spark bucket sends the driver."""
        return (dict(self.edge_views), dict(self.views), {e: list(d) for e, d in self.edge_probes.items()},
                {p: list(d) for p, d in self.expanded_probes.items()})

    def merge(self, edge_views: dict, views: dict, edge_probes: dict | None = None, expanded_probes: dict | None = None, *,
              keep, keep_expanded=None) -> None:
        """Take a bucket's records for the edges ``keep(edge)`` says the local explorer walked
        (an edge's probes with it) and the positions ``keep_expanded(position)`` says it expanded
        (the masks are or-ed per view: the order does not matter)."""
        edge_probes = edge_probes or {}
        for edge in sorted(set(edge_views) | set(edge_probes)):
            if keep(edge):
                if edge in edge_views:
                    self._note(edge_views[edge], *views[edge_views[edge]])
                for digest in edge_probes.get(edge, ()):
                    self._note(digest, *views[digest])
        for position in sorted(expanded_probes or ()):
            if keep_expanded is None or keep_expanded(position):
                for digest in expanded_probes[position]:
                    self._note(digest, *views[digest])
                    self.requested.add(digest)

    def counts(self, name: str) -> tuple[int, int, int]:
        """(violating views, inconclusive views, judged views) of ``name``."""
        bit = _BIT[name]
        bad = sum(1 for b, _ in self.views.values() if b & bit)
        unsure = sum(1 for b, u in self.views.values() if u & bit and not b & bit)
        return bad, unsure, len(self.views)

    def premise_views(self, name: str) -> int | None:
        """The views on which ``name`` could be violated (its premise met), or None for a
        property with no premise on the view (:data:`_PREMISE`)."""
        met = _MET.get(name)
        return None if met is None else sum(1 for _, u in self.views.values() if u & met)


def run_verdict(judge: RebalanceJudge, name: str, discovery, *, complete: bool, why: str):
    """(status, message, measure) of ``name`` for the run, before the promise is applied."""
    bad, unsure, judged = judge.counts(name)
    measure = {"violating_views": bad, "judged_views": judged}
    if unsure:
        measure["inconclusive_views"] = unsure
    met = judge.premise_views(name)
    if met is not None:
        measure["premise_views"] = met
    if bad:
        first = discovery.message if discovery is not None else ""
        return Status.VIOLATED, f"{bad} of {judged} distinct views break it; first: {first}", measure
    if unsure:
        return Status.INCONCLUSIVE, f"undecided on {unsure} of {judged} distinct views (the check's search budget)", measure
    if not complete:
        return Status.INCONCLUSIVE, why, measure
    tested = "" if met is None else f" (its premise met on {met})"
    return Status.HOLDS, f"every answer on {judged} distinct views keeps it{tested}", measure
