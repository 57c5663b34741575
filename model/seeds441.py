"""The KIP-441 example scenarios (seed 002, "Example Scenarios") as data.

Three scenarios, one :class:`SeedRebalance` per rebalance: the leader's view going into it
(members' lists are what they held, ``lags`` what they report) and the assignment the KIP
shows coming out. Tasks keep the KIP's names ``T1``..``T4`` (each its own subtopology, since
the ids have no ``_``); members are ``I1``..``I3``. Configs are the KIP's defaults
(``acceptable_recovery_lag`` 10000, ``max_warmup_replicas`` 2) with one standby replica, as
each scenario states ("Standby Replicas := 1").

The wiki export lost the tables' layout: cells holding a single task vanished and the rest
ran together (``standbyT2T1, T3T1, T3``). Every record's ``note`` quotes what the flattened
text shows and says how it was read. The readings are fixed by the text around them: each
task has one active and one standby, on different instances; the narratives name the moves
("revoking the active task T3 from I1", "I3 focuses on restoring the task (T4) it will
eventually be assigned as active"). Kafka reports warmups as standbys; in the contract they
are ``warmup``.

Where the KIP leaves a choice (which caught-up instance, which task to move), the expected
assignment is *one allowed answer*, not the only one: checks compare what the rules force.

Examples
--------
>>> [(r.scenario, r.round) for r in SCENARIOS]
[('scaling-out', 1), ('scaling-out', 2), ('scaling-in-1', 1), ('scaling-in-2', 1), ('scaling-in-2', 2)]
>>> rounds("scaling-out")[1].expected.of("I3").active
('T3',)
"""

from __future__ import annotations

from dataclasses import dataclass

from rebalproof.model.assignment import Assignment
from rebalproof.model.view import Config, Member, RebalanceInput, Task

__all__ = ["SeedRebalance", "SCENARIOS", "SCENARIO_NAMES", "rounds", "LAGGING", "RESTORING"]

LAGGING = 50_000
"""A lag "more than the acceptable_recovery_lag" (Scaling In Pt. 2): five times the default."""

RESTORING = 30_000
"""A standby still restoring at the second rebalance of Scaling In Pt. 2 (the KIP names only T4 as done)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SeedRebalance:
    """One rebalance of a KIP-441 example: the view going in and the KIP's answer."""

    scenario: str  # "scaling-out", "scaling-in-1", "scaling-in-2"
    section: str  # the KIP's heading of the scenario, verbatim
    title: str  # the KIP's heading of the table, e.g. "First Rebalance (catching-up)"
    round: int  # 1 for the first rebalance after the membership change
    narrative: str  # the KIP's words around the table, verbatim fragments joined by " ... "
    view: RebalanceInput
    expected: Assignment
    note: str  # what the flattened export shows, and how it was read


_OUT = "Scaling Out"
_IN_1 = "Scaling In (Pt. 1\u00a0\u2013 standbys in sync)"  # the export has a no-break space and an en dash
_IN_2 = "Scaling In (Pt. 2 \u2013 standbys lag nontrivially)"

_CONFIG = Config(num_standby_replicas=1, acceptable_recovery_lag=10_000, max_warmup_replicas=2)
_T3 = tuple(Task(id=t) for t in ("T1", "T2", "T3"))
_T4 = tuple(Task(id=t) for t in ("T1", "T2", "T3", "T4"))


def _member(member_id, active=(), standby=(), warmup=(), lags=None) -> Member:
    return Member(id=member_id, active=tuple(active), standby=tuple(standby), warmup=tuple(warmup), lags=dict(lags or {}))


def _assignment(active, standby, warmup=None, *, probing) -> Assignment:
    members = sorted(set(active) | set(standby) | set(warmup or {}))
    return Assignment.build(
        {
            m: {"active": active.get(m, []), "standby": standby.get(m, []), "warmup": (warmup or {}).get(m, [])}
            for m in members
        },
        probing_rebalance=probing,
    )


def _caught_up(*tasks) -> dict:
    return {t: 0 for t in tasks}


SCALING_OUT = (
    SeedRebalance(
        scenario="scaling-out",
        section=_OUT,
        title="First Rebalance (catching-up)",
        round=1,
        narrative="Stateful (active) Tasks := {T1, T2, T3} ... Standby Replicas := 1 ... Instances := {I1, I2} ... "
        "-- New instance (I3) joins --",
        view=RebalanceInput(
            config=_CONFIG,
            tasks=_T3,
            members=(
                _member("I1", active=("T1", "T3"), standby=("T2",), lags=_caught_up("T1", "T2", "T3")),
                _member("I2", active=("T2",), standby=("T1", "T3"), lags=_caught_up("T1", "T2", "T3")),
                _member("I3"),
            ),
            previous_members=("I1", "I2"),
        ),
        expected=_assignment(
            {"I1": ["T1", "T3"], "I2": ["T2"]},
            {"I1": ["T2"], "I2": ["T1", "T3"]},
            {"I3": ["T1", "T3"]},
            probing=True,
        ),
        note="Initial State shows 'T1, T3' then 'standbyT2T1, T3': read as active I1:[T1,T3], I2:[T2] "
        "(the single cell 'T2' lost), standby I1:[T2], I2:[T1,T3]. First Rebalance shows 'T1, T3' then "
        "'standbyT2T1, T3T1, T3': actives unchanged (only caught-up instances get actives), standby "
        "I1:[T2], I2:[T1,T3], and I3:[T1,T3] -- the two extra copies (max_warmup_replicas 2) that Kafka "
        "reports as standbys and the contract calls warmups. Standbys are assumed caught up (lag 0).",
    ),
    SeedRebalance(
        scenario="scaling-out",
        section=_OUT,
        title="Second Rebalance (stable state)",
        round=2,
        narrative="-- I3 finishes catching up, another rebalance is triggered -- ... the second rebalance will "
        "technically itself be composed of two rebalance since we are revoking the active task T3 from I1.",
        view=RebalanceInput(
            config=_CONFIG,
            tasks=_T3,
            members=(
                _member("I1", active=("T1", "T3"), standby=("T2",), lags=_caught_up("T1", "T2", "T3")),
                _member("I2", active=("T2",), standby=("T1", "T3"), lags=_caught_up("T1", "T2", "T3")),
                _member("I3", warmup=("T1", "T3"), lags=_caught_up("T1", "T3")),
            ),
            previous_members=("I1", "I2", "I3"),
        ),
        expected=_assignment(
            {"I1": ["T1"], "I2": ["T2"], "I3": ["T3"]},
            {"I1": ["T2"], "I2": ["T3"], "I3": ["T1"]},
            probing=False,
        ),
        note="The export shows the heading 'Second Rebalance (stable state)' over an empty table. Reconstructed from the narrative (T3 is revoked from I1, so "
        "I3 takes T3 over), balance (one active each) and one standby per task: I3 keeps its caught-up T1 "
        "as the standby, I2 keeps the standby of T3, I1 that of T2; the old copies no longer needed (T1 on "
        "I2, T3 on I1) are dropped.",
    ),
)

_SCALING_IN_INITIAL_NOTE = (
    "Initial State shows 'T1, T4' then 'standbyT3T1, T4T2': read as active I1:[T1,T4], I2:[T2], I3:[T3] "
    "(single cells lost), standby I1:[T3], I2:[T1,T4], I3:[T2]. "
)

SCALING_IN_1 = (
    SeedRebalance(
        scenario="scaling-in-1",
        section=_IN_1,
        title="First Rebalance",
        round=1,
        narrative="Stateful (active) Tasks := {T1, T2, T3, T4} ... Standby Replicas := 1 ... Instances := {I1, I2, I3} ... "
        "The standby tasks in this scenario are assumed to be in sync with the active tasks ... "
        "-- One instance (I1) is brought down -- ... no subsequent rebalance is necessary ... Processing resumes "
        "immediately as the standby tasks are ready to take over as active tasks.",
        view=RebalanceInput(
            config=_CONFIG,
            tasks=_T4,
            members=(
                _member("I2", active=("T2",), standby=("T1", "T4"), lags=_caught_up("T1", "T2", "T4")),
                _member("I3", active=("T3",), standby=("T2",), lags=_caught_up("T2", "T3")),
            ),
            previous_members=("I1", "I2", "I3"),
        ),
        expected=_assignment(
            {"I2": ["T1", "T4"], "I3": ["T2", "T3"]},
            {"I2": ["T2", "T3"], "I3": ["T1", "T4"]},
            probing=False,
        ),
        note=_SCALING_IN_INITIAL_NOTE + "First Rebalance shows 'T1, T4' / 'T2, T3' / 'standbyT2, T3T1, T4': "
        "active I2:[T1,T4], I3:[T2,T3], standby I2:[T2,T3], I3:[T1,T4] (T3 on I2 and T1, T4 on I3 start cold: "
        "required standbys, not extra copies). In-sync standbys: lag 0.",
    ),
)

SCALING_IN_2 = (
    SeedRebalance(
        scenario="scaling-in-2",
        section=_IN_2,
        title="First Rebalance (catching-up)",
        round=1,
        narrative="Stateful (active) Tasks := {T1, T2, T3, T4} ... Standby Replicas := 1 ... Instances := {I1, I2, I3} ... "
        "the standby tasks are lagging the active tasks by some nontrivial amount, that is, by more than "
        "the acceptable_recovery_lag ... -- One instance (I1) is brought down -- ... I3 cannot immediately take over "
        "T2 as an active task since it is not sufficiently caught up ... the first rebalance would produce an "
        "imbalanced assignment where I2 bears the major processing load while I3 focuses on restoring the task (T4) "
        "it will eventually be assigned as active.",
        view=RebalanceInput(
            config=_CONFIG,
            tasks=_T4,
            members=(
                _member("I2", active=("T2",), standby=("T1", "T4"), lags={"T1": LAGGING, "T2": 0, "T4": LAGGING}),
                _member("I3", active=("T3",), standby=("T2",), lags={"T2": LAGGING, "T3": 0}),
            ),
            previous_members=("I1", "I2", "I3"),
        ),
        expected=_assignment(
            {"I2": ["T1", "T2", "T4"], "I3": ["T3"]},
            {"I2": ["T3"], "I3": ["T1", "T2", "T4"]},
            probing=True,
        ),
        note=_SCALING_IN_INITIAL_NOTE + f"Standbys lag {LAGGING} (> 10000). First Rebalance shows 'T1, T2, T4' / "
        "'standbyT3T1, T2, T4': active I2:[T1,T2,T4], I3:[T3] (lost cell), standby I2:[T3], I3:[T1,T2,T4]. "
        "No warmups: I3's standbys are the copies restoring towards balance. Which task I3 will take over "
        "(T4 in the KIP) is a free choice; the output of this round does not show it.",
    ),
    SeedRebalance(
        scenario="scaling-in-2",
        section=_IN_2,
        title="Second Rebalance (stable state)",
        round=2,
        narrative="-- I3 finishes restoring T4 --",
        view=RebalanceInput(
            config=_CONFIG,
            tasks=_T4,
            members=(
                _member("I2", active=("T1", "T2", "T4"), standby=("T3",), lags={"T1": 0, "T2": 0, "T3": RESTORING, "T4": 0}),
                _member("I3", active=("T3",), standby=("T1", "T2", "T4"), lags={"T1": RESTORING, "T2": RESTORING, "T3": 0, "T4": 0}),
            ),
            previous_members=("I2", "I3"),
        ),
        expected=_assignment(
            {"I2": ["T1", "T2"], "I3": ["T3", "T4"]},
            {"I2": ["T3", "T4"], "I3": ["T1", "T2"]},
            probing=False,
        ),
        note=f"Shows 'T1, T2' / 'T3, T4' / 'standbyT3, T4T1, T2': active I2:[T1,T2], I3:[T3,T4], standby "
        f"I2:[T3,T4], I3:[T1,T2]. Lags: only T4 is named as restored on I3; its other standbys and the standby of T3 "
        f"on I2 are taken as still restoring ({RESTORING}); I2 processes its actives (lag 0).",
    ),
)

SCENARIOS: tuple[SeedRebalance, ...] = SCALING_OUT + SCALING_IN_1 + SCALING_IN_2
SCENARIO_NAMES: tuple[str, ...] = ("scaling-out", "scaling-in-1", "scaling-in-2")


def rounds(scenario: str) -> tuple[SeedRebalance, ...]:
    """The rebalances of one scenario, in order; a :class:`KeyError` names the scenarios otherwise."""
    found = tuple(r for r in SCENARIOS if r.scenario == scenario)
    if not found:
        raise KeyError(f"unknown KIP-441 scenario '{scenario}'; the scenarios are {', '.join(SCENARIO_NAMES)}")
    return found
