"""The per-rebalance section of ``rebalproof verify``: assignors judged one rebalance at a time.

(Written first as the interim ``verify`` command; now one section of the verification job.)
The corpus:

- the leader's view of every rebalance of every seed scenario (``rebalproof.model.seeds429``,
  KIP-429, and ``rebalproof.model.seeds441``, KIP-441);
- a fixed set of generated views (:func:`generated_inputs`): the same ones on every run for a
  given ``seed``, from a :class:`random.Random` seeded with it, lags exactly at
  ``acceptable_recovery_lag`` among them. One in four is *settled* (an
  assignment already valid, balanced and caught up: what ``fixpoint`` is about); the others
  are random group states (new, leaving and lagging members, lost leader memory, standbys,
  warmups, stateless tasks).

Each assignor (a built-in is judged by its own rule set, ``py:``/``exec:`` ones by ``rules``)
is run on every view and its answer judged by the per-assignment properties
(:func:`rebalproof.properties.check_assignment`): :func:`run_matrix` tallies, per assignor and
property, how many answers the property held for, was violated in, or was not promised for,
with the first violations' inputs; :func:`judge_row` compares a row with the suite's known
violations.
"""

from __future__ import annotations

import importlib
import random
from dataclasses import dataclass, field
from pathlib import Path

from rebalproof.cli.assign_cmd import finding_json, save_finding
from rebalproof.errors import AssignorError
from rebalproof.model.assignors.spec import resolve
from rebalproof.model.codec import encode_assignment, encode_input
from rebalproof.model.view import Config, Member, RebalanceInput, Task
from rebalproof.properties import Status, check_assignment

__all__ = ["SEED_MODULES", "seed_inputs", "generated_inputs", "Tally", "Row", "run_matrix", "judge_row"]

#: Modules whose ``SCENARIOS`` give the seed corpus: each scenario's rebalances have a ``.view``.
SEED_MODULES = ("rebalproof.model.seeds429", "rebalproof.model.seeds441")
_EXAMPLES = 3  # violations and findings kept per cell, with their inputs


# ------------------------------------------------------------------------------------ corpus


def seed_inputs() -> tuple[list[tuple[str, RebalanceInput]], dict[str, int]]:
    """(label, view) for every rebalance of every seed scenario, and the count per module.

    ``SCENARIOS`` may hold scenarios with ``.rebalances`` or rebalances themselves (each with a
    ``.view``, and ``.scenario`` / ``.round`` to name it). A module that is not there yet counts
    0 (its name is still reported).
    """
    corpus: list[tuple[str, RebalanceInput]] = []
    counts: dict[str, int] = {}
    for module_name in SEED_MODULES:
        short = module_name.rsplit(".", 1)[-1]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            counts[short] = 0
            continue
        before = len(corpus)
        for i, item in enumerate(module.SCENARIOS):
            # a scenario with .rebalances (seeds429), or one rebalance naming its .scenario (seeds441)
            rebalances = getattr(item, "rebalances", None) or (item,)
            name = getattr(item, "name", None) or getattr(item, "scenario", None) or f"scenario{i}"
            for j, rebalance in enumerate(rebalances, start=1):
                corpus.append((f"{short}/{name}/round{getattr(rebalance, 'round', j)}", rebalance.view))
        counts[short] = len(corpus) - before
    return corpus, counts


def generated_inputs(count: int, *, seed: int = 0) -> list[tuple[str, RebalanceInput]]:
    """``count`` leader views drawn from ``random.Random(seed)``: the same ones on every run.

    Examples
    --------
    >>> [label for label, _ in generated_inputs(4)]
    ['generated/0', 'generated/1', 'generated/2', 'generated/3-settled']
    >>> generated_inputs(8, seed=5) == generated_inputs(8, seed=5)
    True
    """
    rng = random.Random(seed)
    out = []
    for i in range(count):
        if i % 4 == 3:
            out.append((f"generated/{i}-settled", _settled_view(rng)))
        else:
            out.append((f"generated/{i}", _random_view(rng)))
    return out


def _tasks(rng: random.Random, stateless_share: float) -> tuple[Task, ...]:
    subtopologies, partitions = rng.randint(1, 3), rng.randint(1, 4)
    return tuple(
        Task(id=f"{s}_{p}", stateful=rng.random() >= stateless_share) for s in range(subtopologies) for p in range(partitions)
    )


def _config(rng: random.Random) -> Config:
    return Config(
        num_standby_replicas=rng.choice((0, 0, 1, 2)),
        acceptable_recovery_lag=rng.choice((100, 10000)),
        max_warmup_replicas=rng.choice((1, 2, 3)),
    )


def _random_view(rng: random.Random) -> RebalanceInput:
    """Any group state: an arbitrary current assignment, lags of every kind, new and leaving members."""
    config, tasks = _config(rng), _tasks(rng, 0.25)
    # lags of every kind: caught up (0, within acceptable_recovery_lag, exactly at it: seed 002's
    # pseudocode counts "lag <= acceptable_recovery_lag" as caught up), behind, far behind
    limit = config.acceptable_recovery_lag
    ids = [f"I{k}" for k in range(1, rng.randint(1, 5) + 1)]
    leaving = {m for m in ids if rng.random() < 0.15}
    if leaving == set(ids):
        leaving.discard(ids[0])
    memory_lost = rng.random() < 0.15
    old = [m for m in ids if memory_lost or m == ids[0] or rng.random() < 0.7]
    roles = {m: {"active": [], "standby": [], "warmup": []} for m in ids}
    lags: dict[str, dict[str, int]] = {m: {} for m in ids}
    for task in tasks:
        holders = rng.sample(old, k=len(old))
        if rng.random() < 0.85 and holders:
            roles[holders.pop()]["active"].append(task.id)
        if not task.stateful:
            continue
        for _ in range(min(len(holders), rng.choice((0, config.num_standby_replicas, config.num_standby_replicas)))):
            member = holders.pop()
            roles[member]["standby"].append(task.id)
            lags[member][task.id] = rng.choice((0, 50, 5000, 50000, limit))
        if holders and rng.random() < 0.2:
            member = holders.pop()
            roles[member]["warmup"].append(task.id)
            lags[member][task.id] = rng.choice((0, 500, 20000, limit))
        for member in ids:  # state left on disk from earlier rounds, or none
            if task.id not in lags[member] and task.id not in roles[member]["active"] and rng.random() < 0.3:
                lags[member][task.id] = rng.choice((0, 100, 20000, 200000, limit))
    members = tuple(
        Member(id=m, capacity=rng.choice((1, 1, 1, 2)), leaving=m in leaving, lags=lags[m], **roles[m]) for m in ids
    )
    return RebalanceInput(config=config, tasks=tasks, members=members, previous_members=None if memory_lost else tuple(old))


def _settled_view(rng: random.Random) -> RebalanceInput:
    """A group at rest: actives dealt round-robin (balanced, spread), standbys next to them, all caught up
    (each copy at lag 0 or exactly ``acceptable_recovery_lag``: caught up either way)."""
    config, tasks = _config(rng), _tasks(rng, 0.2)
    caught_up = (0, config.acceptable_recovery_lag)
    ids = [f"I{k}" for k in range(1, rng.randint(1, 4) + 1)]
    roles = {m: {"active": [], "standby": [], "warmup": []} for m in ids}
    lags: dict[str, dict[str, int]] = {m: {} for m in ids}
    for k, task in enumerate(tasks):
        roles[ids[k % len(ids)]]["active"].append(task.id)
        lags[ids[k % len(ids)]][task.id] = rng.choice(caught_up)
        if task.stateful:
            for s in range(1, min(config.num_standby_replicas, len(ids) - 1) + 1):
                member = ids[(k + s) % len(ids)]
                roles[member]["standby"].append(task.id)
                lags[member][task.id] = rng.choice(caught_up)
    members = tuple(Member(id=m, lags=lags[m], **roles[m]) for m in ids)
    return RebalanceInput(config=config, tasks=tasks, members=members, previous_members=tuple(ids))


# ------------------------------------------------------------------------------------ matrix


@dataclass
class Tally:
    """Counts of one property's verdicts for one assignor, with the first violations.

    ``vacuous`` counts the holds whose premise was not met (``measure["premise"]`` false, as
    ``fixpoint`` and ``stable`` report it): a property that only ever holds vacuously had no
    witness in the corpus, and the report says so (STYLE.md: every always has a sometimes).
    """

    counts: dict[str, int] = field(default_factory=lambda: {s.value: 0 for s in Status})
    vacuous: int = 0
    examples: list[dict] = field(default_factory=list)

    def add(self, verdict) -> None:
        self.counts[verdict.status.value] += 1
        if verdict.holds and verdict.measure.get("premise") is False:
            self.vacuous += 1

    @property
    def witnessed(self) -> bool:
        """False when the property was promised but never met its premise (held only vacuously)."""
        holds, violated = self.counts[Status.HOLDS.value], self.counts[Status.VIOLATED.value]
        return violated > 0 or holds == 0 or self.vacuous < holds

    def cell(self) -> str:
        """``holds 180``, ``violated 3/180``, ``not promised``, or a mix, for the table."""
        seen = {s: n for s, n in self.counts.items() if n}
        total = sum(seen.values())
        if not seen:
            return "-"
        if set(seen) == {Status.NOT_PROMISED.value}:
            return Status.NOT_PROMISED.value
        if Status.VIOLATED.value in seen:
            head = f"violated {seen.pop(Status.VIOLATED.value)}/{total}"
            seen.pop(Status.HOLDS.value, None)
        else:
            status = Status.HOLDS.value if Status.HOLDS.value in seen else next(iter(seen))
            head = f"{status} {seen.pop(status)}"
            if status == Status.HOLDS.value and self.vacuous:
                head += f" ({self.vacuous} vacuous)"
        rest = ", ".join(f"{s} {n}" for s, n in seen.items())
        return f"{head}, {rest}" if rest else head


@dataclass
class Row:
    """One assignor's results over the corpus."""

    assignor: str
    rules: str
    calls: int = 0
    properties: dict[str, Tally] = field(default_factory=dict)
    findings: int = 0
    finding_examples: list[dict] = field(default_factory=list)

    @property
    def violated(self) -> list[str]:
        return [p for p, t in self.properties.items() if t.counts[Status.VIOLATED.value]]

    def to_json(self) -> dict:
        return {
            "assignor": self.assignor,
            "rules": self.rules,
            "calls": self.calls,
            "findings": self.findings,
            "finding_examples": self.finding_examples,
            "properties": {
                p: {"counts": t.counts, "vacuous": t.vacuous, "violations": t.examples} for p, t in self.properties.items()
            },
        }


def run_matrix(specs, corpus, *, rules: str, timeout: float, finding_dir: Path | None = None, on_row=None) -> list[Row]:
    """Run each assignor on each view of the corpus and tally the property verdicts."""
    rows = []
    for spec in specs:
        with resolve(spec, timeout=timeout) as assignor:
            row = Row(assignor=spec, rules=assignor.rules or rules)
            for label, view in corpus:
                try:
                    answer = assignor(view)
                except AssignorError as error:
                    row.findings += 1
                    if len(row.finding_examples) < _EXAMPLES:
                        saved = save_finding(error, finding_dir) if finding_dir is not None else None
                        row.finding_examples.append({"label": label, **finding_json(error), "saved": str(saved) if saved else None})
                    continue
                for verdict in check_assignment(view, answer, rules=row.rules):
                    tally = row.properties.setdefault(verdict.property, Tally())
                    tally.add(verdict)
                    if verdict.violated and len(tally.examples) < _EXAMPLES:
                        tally.examples.append(
                            {"label": label, **verdict.to_json(), "input": encode_input(view), "output": encode_assignment(answer)}
                        )
            row.calls = assignor.calls
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows


def judge_row(row: Row, known: dict[str, str], not_promised: tuple[str, ...] | None = None) -> dict:
    """Outcome per property of one assignor's row (as :func:`rebalproof.pipeline.suite.classify` names them).

    ``known`` maps a property to why the assignor is known to violate it; ``not_promised``
    (when recorded) lists the properties its rule set does not promise: a property the rule set
    judged after all, or one it stopped promising, is a *promise changed*. A finding (the
    assignor crashed, hung or answered malformed output) is always unexpected.
    """
    outcomes = {}
    for name, tally in row.properties.items():
        counts = tally.counts
        violated = counts[Status.VIOLATED.value] > 0
        only_not_promised = counts[Status.NOT_PROMISED.value] > 0 and not any(
            counts[s.value] for s in Status if s is not Status.NOT_PROMISED
        )
        if not_promised is not None and only_not_promised != (name in not_promised):
            outcomes[name] = "promise changed"
        elif name in known:
            outcomes[name] = "expected finding" if violated else "fixed"
        else:
            outcomes[name] = "regression" if violated else "pass"
    unexpected = sum(o in ("regression", "fixed", "promise changed") for o in outcomes.values()) + (1 if row.findings else 0)
    return {"outcomes": outcomes, "unexpected": unexpected, "known": dict(known)}
