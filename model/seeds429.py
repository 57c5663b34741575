"""Every KIP-429 scenario the seeds write out, as data: the leader's view and the seed's answer per rebalance.

Seeds 001 (the KIP-429 draft) and 000 (its later revision) walk through scale up, scale up
from an empty group, scale down, online host swapping, and leader crashes during and before
scaling. For each rebalance this module gives the leader's :class:`~rebalproof.model.view.RebalanceInput`
built from the seed's "join with following metadata/status" lines, and the seed's assignment
as an :class:`~rebalproof.model.assignment.Assignment`. Golden traces, ``make verify`` and the
learner tests read them from here.

How the seed's lines become a view (the contract of :mod:`rebalproof.model.assignors.learner`):

- member ids ``S*`` and task ids ``T*`` exactly as in the seed (T1..T5; T1..T4 in the host
  swap); every task stateful; every instance has capacity 1; the config is the contract's default (``acceptable_recovery_lag``
  10000, no standbys);
- ``assigned: [...]`` -> ``active``; ``learning: [...]`` -> ``warmup``, with lag
  :data:`READY_LAG` when the seed says the learner is ready and :data:`UNREADY_LAG` otherwise;
  ``revoked: [...]`` (a task being learned, given up at the join) -> only a lag of
  :data:`READY_LAG` in ``lags``: the previous owner still has the state, in no role;
- an active task reports no lag (an active copy counts as lag 0,
  :func:`~rebalproof.model.ranking.lag_of`);
- ``previous_members`` is the leader's memory of the last round; absent (None) after the
  leader crashed; an empty tuple when the group was empty;
- a round whose seed text lists no join lines (the first round of a scenario, or where the
  seed only names who joins) starts from the previous answer: members hold what they were
  assigned, new members hold nothing.

The seed's answer is the seed's own free choice wherever the rules allow several
(``free_choice`` says what was chosen); tests compare the decisions the rules force and
accept any choice the rules allow. Where the seed text contradicts itself, the view keeps
the intended behaviour and ``note`` quotes the text (see ``seeds/README.md``).

Examples
--------
>>> [s.name for s in SCENARIOS]
['scale-up', 'scale-up-from-empty', 'scale-down', 'host-swap', 'leader-crash-during-scaling', 'leader-crash-before-scaling']
>>> r = scenario("scale-down").rebalances[1]
>>> r.view.member("S2").leaving, r.view.member("S2").active, r.view.member("S2").lags
(True, (), (('T3', 0), ('T4', 0)))
>>> r.expected.of("S2").active
('T3',)
"""

from __future__ import annotations

from dataclasses import dataclass

from rebalproof.errors import InputError
from rebalproof.model.assignment import Assignment, MemberAssignment
from rebalproof.model.view import Member, RebalanceInput, Task

__all__ = [
    "READY_LAG",
    "UNREADY_LAG",
    "SeedRebalance",
    "SeedScenario",
    "SCENARIOS",
    "scenario",
    "all_rebalances",
    "joined",
    "leader_view",
    "seed_answer",
]

READY_LAG = 0
"""Lag of a learner the seed calls ready, and of a task its previous owner just revoked."""

UNREADY_LAG = 10**6
"""Lag of a learner still replaying: far above the default ``acceptable_recovery_lag`` (10000)."""

_TASKS = tuple(Task(id=f"T{i}") for i in range(1, 10))
_SEED_001 = "001_cae4ac70bffb4682.txt"
_SEED_000 = "000_a1d416593e157c7b.txt"


@dataclass(frozen=True, kw_only=True)
class SeedRebalance:
    """One rebalance of a seed scenario: what the leader sees and what the seed assigns.

    Attributes
    ----------
    scenario : str
        The :attr:`SeedScenario.name` it belongs to.
    title : str
        The seed's heading, e.g. ``"#Second Rebalance"``.
    round : int
        1 for the first rebalance of the scenario.
    narrative : str
        The seed's text of the round, verbatim (from the revision the view follows).
    view : RebalanceInput
        The leader's view built from the seed's join lines.
    expected : Assignment
        The seed's "performs task assignments" lines (``assigned`` -> active,
        ``learning`` -> warmup; the answer's ``revoked`` column is informational).
    learner_version : int
        The KIP-429 version whose rules the scenario follows (1 or 2).
    note : str
        Where the seed's text contradicts itself, the text and how the view reads it.
    free_choice : str
        What the seed chose where the rules allow several answers ("" when forced).
    """

    scenario: str
    title: str
    round: int
    narrative: str
    view: RebalanceInput
    expected: Assignment
    learner_version: int
    note: str = ""
    free_choice: str = ""


@dataclass(frozen=True, kw_only=True)
class SeedScenario:
    """A scenario of the seeds: where it is, the stable state it starts from, its rebalances.

    ``initial`` is the seed's "Group stable state" (member -> active tasks, in id order);
    ``leaving`` the members marked to leave during it.
    """

    name: str
    seed: str
    section: str
    title: str
    initial: tuple[tuple[str, tuple[str, ...]], ...]
    leaving: tuple[str, ...]
    rebalances: tuple[SeedRebalance, ...]
    learner_version: int
    note: str = ""


# -- tiny builders ------------------------------------------------------------------------------


def joined(
    member_id: str,
    assigned=(),
    revoked=(),
    learning=(),
    *,
    ready: bool = False,
    leaving: bool = False,
) -> Member:
    """A seed join line ``S1(assigned: [..], revoked: [..], learning: [..])`` as a :class:`Member`.

    >>> joined("S1", ["T2"], ["T1"]).lags
    (('T1', 0),)
    >>> joined("S4", learning=["T1"]).lags
    (('T1', 1000000),)
    """
    lags = {t: READY_LAG for t in revoked}
    lags.update({t: READY_LAG if ready else UNREADY_LAG for t in learning})
    return Member(id=member_id, leaving=leaving, active=tuple(assigned), warmup=tuple(learning), lags=lags)


def leader_view(*members: Member, previous: tuple[str, ...] | None, tasks: int = 5) -> RebalanceInput:
    """The leader's view over tasks ``T1..T<tasks>`` (all stateful, default config)."""
    return RebalanceInput(tasks=_TASKS[:tasks], members=members, previous_members=previous)


def seed_answer(**lines: tuple) -> Assignment:
    """The seed's assignment from ``S1=(assigned, learning)`` pairs.

    >>> seed_answer(S1=(["T1"], []), S2=([], ["T1"])).of("S2").warmup
    ('T1',)
    """
    return Assignment(
        members={m: MemberAssignment(active=tuple(a), warmup=tuple(l)) for m, (a, l) in lines.items()},
        probing_rebalance=False,
    )


def _rounds(name: str, version: int, *rounds: dict) -> tuple[SeedRebalance, ...]:
    return tuple(SeedRebalance(scenario=name, round=i, learner_version=version, **r) for i, r in enumerate(rounds, 1))


_T12, _T34, _T5 = ["T1", "T2"], ["T3", "T4"], ["T5"]

# -- Scale Up Running Application -----------------------------------------------------------------

_SCALE_UP = SeedScenario(
    name="scale-up",
    seed=_SEED_001,
    section="Scale Up Running Application",
    title="Scale-up",
    initial=(("S1", ("T1", "T2")), ("S2", ("T3", "T4")), ("S3", ("T5",))),
    leaving=(),
    learner_version=1,
    note="Only new members take learners here, so version 1.0 suffices (version 2 gives the same answers).",
    rebalances=_rounds(
        "scale-up",
        1,
        dict(
            title="#First Rebalance",
            narrative=(
                "New member S4 joins the group\n"
                "S1 performs task assignments:\n"
                "\tS1(assigned: [T1, T2], revoked: [], learning: [])\n"
                "\tS2(assigned: [T3, T4], revoked: [], learning: [])\n"
                "\tS3(assigned: [T5], revoked: [], learning: [])\n"
                "\tS4(assigned: [], revoked: [], learning: [T1])"
            ),
            view=leader_view(joined("S1", _T12), joined("S2", _T34), joined("S3", _T5), joined("S4"), previous=("S1", "S2", "S3")),
            expected=seed_answer(S1=(_T12, []), S2=(_T34, []), S3=(_T5, []), S4=([], ["T1"])),
            free_choice="which task S4 learns: any active of a heaviest instance (S1 or S2 hold two); the seed takes T1 from S1",
        ),
        dict(
            title="#Second Rebalance",
            narrative=(
                "New member S5 joins the group.\n"
                "Member S1~S5 join with following metadata: (S4 is not ready yet)\n"
                "\tS1(assigned: [T2], revoked: [T1], learning: []) // T1 revoked because it's \"being learned\"\n"
                "\tS2(assigned: [T3, T4], revoked: [], learning: [])\n"
                "\tS3(assigned: [T5], revoked: [], learning: [])\n"
                "\tS4(assigned: [], revoked: [], learning: [T1])\n"
                "\tS5(assigned: [], revoked: [], learning: [])\n"
                "S1 performs task assignments: \n"
                "\tS1(assigned: [T1, T2], revoked: [], learning: [])\n"
                "\tS2(assigned: [T3, T4], revoked: [], learning: [])\n"
                "\tS3(assigned: [T5], revoked: [], learning: [])\n"
                "\tS4(assigned: [], revoked: [], learning: [T1])\n"
                "\tS5(assigned: [], revoked: [], learning: [T3])"
            ),
            view=leader_view(
                joined("S1", ["T2"], ["T1"]),
                joined("S2", _T34),
                joined("S3", _T5),
                joined("S4", learning=["T1"]),
                joined("S5"),
                previous=("S1", "S2", "S3", "S4"),
            ),
            expected=seed_answer(S1=(_T12, []), S2=(_T34, []), S3=(_T5, []), S4=([], ["T1"]), S5=([], ["T3"])),
            note=(
                "Seed 001 (and 003, 004) show the new member joining as 'S5(assigned: [], revoked: [], "
                "learning: [T3])', a learner it has not been given yet; seed 000 corrects it to "
                "'S5(assigned: [], revoked: [], learning: [])'. The view follows 000."
            ),
            free_choice="which of S2's tasks S5 learns (S2 is the only instance with two tasks not being learned); the seed takes T3",
        ),
        dict(
            title="#Third Rebalance",
            narrative=(
                "Member S4 finishes its replay and becomes ready, re-attempting to join the group.\n"
                "Member S1~S5 join with following status:(S5 is not ready yet)\n"
                "\tS1(assigned: [T2], revoked: [T1], learning: [])\n"
                "\tS2(assigned: [T4], revoked: [T3], learning: []) // T3 revoked because it's \"being learned\"\n"
                "\tS3(assigned: [T5], revoked: [], learning: [])\n"
                "\tS4(assigned: [], revoked: [], learning: [T1])\n"
                "\tS5(assigned: [], revoked: [], learning: [T3])\n"
                "S1 performs task assignments:\n"
                "\tS1(assigned: [T2], revoked: [T1], learning: [])\n"
                "\tS2(assigned: [T3, T4], revoked: [], learning: [])\n"
                "\tS3(assigned: [T5], revoked: [], learning: [])\n"
                "\tS4(assigned: [T1], revoked: [], learning: [])\n"
                "\tS5(assigned: [], revoked: [], learning: [T3])"
            ),
            view=leader_view(
                joined("S1", ["T2"], ["T1"]),
                joined("S2", ["T4"], ["T3"]),
                joined("S3", _T5),
                joined("S4", learning=["T1"], ready=True),
                joined("S5", learning=["T3"]),
                previous=("S1", "S2", "S3", "S4", "S5"),
            ),
            expected=seed_answer(S1=(["T2"], []), S2=(_T34, []), S3=(_T5, []), S4=(["T1"], []), S5=([], ["T3"])),
        ),
        dict(
            title="#Fourth Rebalance",
            narrative=(
                "Member S5 is ready, re-attempt to join the group. \n"
                "Member S1~S5 join with following status:(S5 is not ready yet)\n"
                "\tS1(assigned: [T2], revoked: [], learning: [])\n"
                "\tS2(assigned: [T4], revoked: [T3], learning: []) // T3 revoked because it's \"being learned\"\n"
                "\tS3(assigned: [T5], revoked: [], learning: [])\n"
                "\tS4(assigned: [T1], revoked: [], learning: [])\n"
                "\tS5(assigned: [], revoked: [], learning: [T3])\n"
                "S1 performs task assignments:\n"
                "\tS1(assigned: [T2], revoked: [], learning: [])\n"
                "\tS2(assigned: [T4], revoked: [T3], learning: [])\n"
                "\tS3(assigned: [T5], revoked: [], learning: [])\n"
                "\tS4(assigned: [T1], revoked: [], learning: [])\n"
                "\tS5(assigned: [T3], revoked: [], learning: [])\n"
                "Now the group reaches balance with 5 members each owning one task."
            ),
            view=leader_view(
                joined("S1", ["T2"]),
                joined("S2", ["T4"], ["T3"]),
                joined("S3", _T5),
                joined("S4", ["T1"]),
                joined("S5", learning=["T3"], ready=True),
                previous=("S1", "S2", "S3", "S4", "S5"),
            ),
            expected=seed_answer(S1=(["T2"], []), S2=(["T4"], []), S3=(_T5, []), S4=(["T1"], []), S5=(["T3"], [])),
            note=(
                "The join line says '(S5 is not ready yet)' in the round that begins 'Member S5 is ready', "
                "and S5 takes T3 over: the view has S5's learner ready (lag 0)."
            ),
        ),
    ),
)

# -- Scale Up from Empty Group --------------------------------------------------------------------

_FROM_EMPTY = SeedScenario(
    name="scale-up-from-empty",
    seed=_SEED_001,
    section="Scale Up from Empty Group",
    title="Scale-up from ground",
    initial=(),
    leaving=(),
    learner_version=1,
    note=(
        "The section says 'There is no need to implement a learner stage because there is nothing to "
        "learn'; that holds for tasks nobody owns (first rebalance). In the second rebalance S1 owns "
        "every task, so the seed itself uses learners, which are ready at once ('S2 and S3 are ready "
        "immediately after the assignment'): the third view has them at lag 0."
    ),
    rebalances=_rounds(
        "scale-up-from-empty",
        1,
        dict(
            title="#First Rebalance",
            narrative=(
                "New member S1 joins the group\n"
                "S1 performs task assignments:\n"
                "S1(assigned: [T1, T2, T3, T4, T5], revoked: [], learning: []) // T1~5 not previously owned"
            ),
            view=leader_view(joined("S1"), previous=()),
            expected=seed_answer(S1=(["T1", "T2", "T3", "T4", "T5"], [])),
            note="'Group empty state': the leader knows the last round had no members, so previous_members is empty, not absent.",
        ),
        dict(
            title="#Second Rebalance",
            narrative=(
                "New member S2, S3 joins the group\n"
                "S1 performs task assignments:\n"
                "S1(assigned: [T1, T2, T3, T4, T5], revoked: [], learning: []) \n"
                "S2(assigned: [], revoked: [], learning: [T3, T4])\n"
                "S3(assigned: [], revoked: [], learning: [T5])"
            ),
            view=leader_view(joined("S1", ["T1", "T2", "T3", "T4", "T5"]), joined("S2"), joined("S3"), previous=("S1",)),
            expected=seed_answer(S1=(["T1", "T2", "T3", "T4", "T5"], []), S2=([], ["T3", "T4"]), S3=([], ["T5"])),
            note="The seed gives no join lines for this round: S1 joins holding its five tasks, S2 and S3 join empty.",
            free_choice="which three of S1's tasks are learned and which new member takes two; the seed moves T3, T4 to S2 and T5 to S3",
        ),
        dict(
            title="#Third Rebalance",
            narrative=(
                "S2 and S3 are ready immediately after the assignment.\n"
                "Member S1~S3 join with following status:\n"
                "\tS1(assigned: [T1, T2], revoked: [T3, T4, T5], learning: []) \n"
                "\tS2(assigned: [], revoked: [], learning: [T3, T4])\n"
                "\tS3(assigned: [], revoked: [], learning: [T5])\n"
                "S1 performs task assignments:\n"
                "\tS1(assigned: [T1, T2], revoked: [T3, T4, T5], learning: []) \n"
                "\tS2(assigned: [T3, T4], revoked: [], learning: [])\n"
                "\tS3(assigned: [T5], revoked: [], learning: [])"
            ),
            view=leader_view(
                joined("S1", _T12, ["T3", "T4", "T5"]),
                joined("S2", learning=_T34, ready=True),
                joined("S3", learning=_T5, ready=True),
                previous=("S1", "S2", "S3"),
            ),
            expected=seed_answer(S1=(_T12, []), S2=(_T34, []), S3=(_T5, [])),
        ),
    ),
)

# -- Scale Down Running Application ---------------------------------------------------------------

_SCALE_DOWN = SeedScenario(
    name="scale-down",
    seed=_SEED_001,
    section="Scale Down Running Application",
    title="Leader crash during scaling",
    initial=(("S1", ("T1", "T2")), ("S2", ("T3", "T4")), ("S3", ("T5",))),
    leaving=("S2",),
    learner_version=2,
    note=(
        "The code block is titled 'Leader crash during scaling' although no leader crashes in it: it is "
        "the scale-down walk-through (S2 leaving). The leader-crash walk-through sits under 'Leader "
        "Transfer During Scaling' with the title 'Scale-down stream applications': the two titles are "
        "swapped. Learners go to existing members (S1, S3), so version 2.0 is needed."
    ),
    rebalances=_rounds(
        "scale-down",
        2,
        dict(
            title="#First Rebalance",
            narrative=(
                "Member S2 joins the group and claim that it is leaving\n"
                "S1 performs task assignments:\n"
                "\tS1(assigned: [T1, T2], revoked: [], learning: [T3])\n"
                "\tS2(assigned: [T3, T4], revoked: [], learning: [])\n"
                "\tS3(assigned: [T5], revoked: [], learning: [T4])"
            ),
            view=leader_view(joined("S1", _T12), joined("S2", _T34, leaving=True), joined("S3", _T5), previous=("S1", "S2", "S3")),
            expected=seed_answer(S1=(_T12, ["T3"]), S2=(_T34, []), S3=(_T5, ["T4"])),
            free_choice="which staying member ends with three tasks (S1 or S3); the seed has S1 learn T3 and S3 learn T4",
        ),
        dict(
            title="#Second Rebalance",
            narrative=(
                "S3 finishes replay first and trigger another rebalance\n"
                "Member S1~S3 join with following status:(S1 is not ready yet)\n"
                "\tS1(assigned: [T1, T2], revoked: [], learning: [T3])\n"
                "\tS2(assigned: [], revoked: [T3, T4], learning: []) \n"
                "\tS3(assigned: [T5], revoked: [], learning: [T4])\n"
                "S1 performs task assignments:\n"
                "\tS1(assigned: [T1, T2], revoked: [], learning: [T3])\n"
                "\tS2(assigned: [T3], revoked: [T4], learning: [])\n"
                "\tS3(assigned: [T4, T5], revoked: [], learning: [])"
            ),
            view=leader_view(
                joined("S1", _T12, learning=["T3"]),
                joined("S2", [], _T34, leaving=True),
                joined("S3", _T5, learning=["T4"], ready=True),
                previous=("S1", "S2", "S3"),
            ),
            expected=seed_answer(S1=(_T12, ["T3"]), S2=(["T3"], []), S3=(["T4", "T5"], [])),
            note=(
                "Seed 001 shows S2 joining as 'S2(assigned: [T3], revoked: [T4], learning: [])', but T3 "
                "is being learned by S1 as much as T4 by S3, and owners revoke every task being learned; "
                "seed 000 corrects it to 'S2(assigned: [], revoked: [T3, T4], learning: [])'. The view "
                "follows 000; the answer (S2 gets T3 back while S1's learner is not ready) is the same in both."
            ),
        ),
        dict(
            title="#Third Rebalance",
            narrative=(
                "S1 finishes replay and trigger rebalance.\n"
                "Member S1~S3 join with following status: \n"
                "\tS1(assigned: [T1, T2], revoked: [], learning: [T3])\n"
                "\tS2(assigned: [], revoked: [T3], learning: []) \n"
                "\tS3(assigned: [T4, T5], revoked: [], learning: [])\n"
                "S1 performs task assignments:\n"
                "\tS1(assigned: [T1, T2, T3], revoked: [], learning: [])\n"
                "\tS2(assigned: [], revoked: [T3], learning: [])\n"
                "\tS3(assigned: [T4, T5], revoked: [], learning: [])\n"
                "S2 will shutdown itself upon new assignment since there is no assigned task left."
            ),
            view=leader_view(
                joined("S1", _T12, learning=["T3"], ready=True),
                joined("S2", [], ["T3"], leaving=True),
                joined("S3", ["T4", "T5"]),
                previous=("S1", "S2", "S3"),
            ),
            expected=seed_answer(S1=(["T1", "T2", "T3"], []), S2=([], []), S3=(["T4", "T5"], [])),
        ),
    ),
)

# -- Online Host Swapping -------------------------------------------------------------------------

_HOST_SWAP = SeedScenario(
    name="host-swap",
    seed=_SEED_001,
    section="Online Host Swapping",
    title="Online Swapping",
    initial=(("S1", ("T1", "T2")), ("S2", ("T3", "T4"))),
    leaving=("S1", "S2"),
    learner_version=2,
    note=(
        "Seed 001 says 'Increase the capacity of the current stream job to 2'; seed 000 corrects it to "
        "'2X' (twice the instances) and titles the section 'Online Host Swapping (Scaling Up Then "
        "Down)'. Every instance has capacity 1. In the second rebalance S3 and S4 are no longer new but "
        "take more learners, which version 1.0 forbids: version 2.0 is needed."
    ),
    rebalances=_rounds(
        "host-swap",
        2,
        dict(
            title="#First Rebalance",
            narrative=(
                "Member S3, S4 join the group\n"
                "S1 performs task assignments:\n"
                "\tS1(assigned: [T1, T2], revoked: [], learning: [])\n"
                "\tS2(assigned: [T3, T4], revoked: [], learning: [])\n"
                "\tS3(assigned: [], revoked: [], learning: [T2])\n"
                "\tS4(assigned: [], revoked: [], learning: [T4])"
            ),
            view=leader_view(joined("S1", _T12), joined("S2", _T34), joined("S3"), joined("S4"), previous=("S1", "S2"), tasks=4),
            expected=seed_answer(S1=(_T12, []), S2=(_T34, []), S3=([], ["T2"]), S4=([], ["T4"])),
            free_choice="which task each old instance hands over; the seed moves T2 (to S3) and T4 (to S4)",
        ),
        dict(
            title="#Second Rebalance",
            narrative=(
                "Use scaling tool to indicate S1 & S2 are leaving \n"
                "Member S1, S2 initiate rebalance to indicate state change (leaving)\n"
                "Member S1~S4 join with following status: \n"
                "\tS1(assigned: [T1], revoked: [T2], learning: [])\n"
                "\tS2(assigned: [T3], revoked: [T4], learning: []) \n"
                "\tS3(assigned: [], revoked: [], learning: [T2])\n"
                "\tS4(assigned: [], revoked: [], learning: [T4])\n"
                "S1 performs task assignments:\n"
                "\tS1(assigned: [T1, T2], revoked: [], learning: [])\n"
                "\tS2(assigned: [T3, T4], revoked: [], learning: [])\n"
                "\tS3(assigned: [], revoked: [], learning: [T1, T2])\n"
                "\tS4(assigned: [], revoked: [], learning: [T3, T4])"
            ),
            view=leader_view(
                joined("S1", ["T1"], ["T2"], leaving=True),
                joined("S2", ["T3"], ["T4"], leaving=True),
                joined("S3", learning=["T2"]),
                joined("S4", learning=["T4"]),
                previous=("S1", "S2", "S3", "S4"),
                tasks=4,
            ),
            expected=seed_answer(S1=(_T12, []), S2=(_T34, []), S3=([], _T12), S4=([], _T34)),
            note="The seed does not say whether S3 and S4 are ready; they finish replaying only in the third round, so their learners are not ready here.",
            free_choice="which new instance learns T1 and which T3; the seed gives T1 to S3 and T3 to S4",
        ),
        dict(
            title="#Third Rebalance",
            narrative=(
                "S3 and S4 finishes replay T1 ~ T4 trigger rebalance.\n"
                "Member S1~S4 join with following status: \n"
                "\tS1(assigned: [], revoked: [T1, T2], learning: [])\n"
                "\tS2(assigned: [], revoked: [T3, T4], learning: [])\n"
                "\tS3(assigned: [], revoked: [], learning: [T1, T2])\n"
                "\tS4(assigned: [], revoked: [], learning: [T3, T4])\n"
                "S1 performs task assignments:\n"
                "\tS1(assigned: [], revoked: [], learning: [])\n"
                "\tS2(assigned: [], revoked: [], learning: [])\n"
                "\tS3(assigned: [T1, T2], revoked: [], learning: [])\n"
                "\tS4(assigned: [T3, T4], revoked: [], learning: [])\n"
                "S1~S2 will shutdown themselves upon new assignment since there is no assigned task left."
            ),
            view=leader_view(
                joined("S1", [], _T12, leaving=True),
                joined("S2", [], _T34, leaving=True),
                joined("S3", learning=_T12, ready=True),
                joined("S4", learning=_T34, ready=True),
                previous=("S1", "S2", "S3", "S4"),
                tasks=4,
            ),
            expected=seed_answer(S1=([], []), S2=([], []), S3=(_T12, []), S4=(_T34, [])),
        ),
    ),
)

# -- Leader Transfer During Scaling ---------------------------------------------------------------

_CRASH_DURING = SeedScenario(
    name="leader-crash-during-scaling",
    seed=_SEED_001,
    section="Leader Transfer During Scaling",
    title="Scale-down stream applications",
    initial=(("S1", ("T1", "T2")), ("S2", ("T3", "T4")), ("S3", ("T5",))),
    leaving=(),
    learner_version=1,
    note=(
        "The code block is titled 'Scale-down stream applications' although it scales up (S4 joins) and "
        "the leader crashes: its title and the scale-down block's are swapped. Seed 000 repeats the "
        "block twice, the first copy garbled ('learningS2[T3, T4], S3[T5]')."
    ),
    rebalances=_rounds(
        "leader-crash-during-scaling",
        1,
        dict(
            title="#First Rebalance",
            narrative=(
                "New member S4 joins the group\n"
                "S1 performs task assignments:\n"
                "\tS1(assigned: [T1, T2], revoked: [], learning: [])\n"
                "\tS2(assigned: [T3, T4], revoked: [], learning: [])\n"
                "\tS3(assigned: [T5], revoked: [], learning: [])\n"
                "\tS4(assigned: [], revoked: [], learning: [T1])"
            ),
            view=leader_view(joined("S1", _T12), joined("S2", _T34), joined("S3", _T5), joined("S4"), previous=("S1", "S2", "S3")),
            expected=seed_answer(S1=(_T12, []), S2=(_T34, []), S3=(_T5, []), S4=([], ["T1"])),
            free_choice="which task S4 learns: any active of a heaviest instance (S1 or S2 hold two); the seed takes T1 from S1",
        ),
        dict(
            title="#Second Rebalance",
            narrative=(
                "S1 crashes/gets killed before S4 is ready, S2 takes over the leader.\n"
                "Member S2~S4 join with following status: \n"
                "\tS2(assigned: [T3, T4], revoked: [], learning: [])\n"
                "\tS3(assigned: [T5], revoked: [], learning: []) \n"
                "\tS4(assigned: [], revoked: [], learning: [T1])\n"
                "Note that T2 is unassigned, and S4 is learning T1 which has no current active task. We \n"
                "could rebalance T1, T2 immediately.\t\n"
                "S2 performs task assignments:\n"
                "\tS2(assigned: [T3, T4], revoked: [], learning: [])\n"
                "\tS3(assigned: [T5, T2], revoked: [], learning: [])\n"
                "\tS4(assigned: [T1], revoked: [], learning: [])\n"
                "Now the group reaches balance."
            ),
            view=leader_view(joined("S2", _T34), joined("S3", _T5), joined("S4", learning=["T1"]), previous=None),
            expected=seed_answer(S2=(_T34, []), S3=(["T2", "T5"], []), S4=(["T1"], [])),
            note="S2 is the new leader and has lost S1's memory: previous_members is absent. S4's learner is not ready ('before S4 is ready').",
            free_choice="which of S3 and S4 (one task each) takes the orphaned T2; the seed picks S3",
        ),
    ),
)

# -- Leader Transfer Before Scaling ---------------------------------------------------------------

_CRASH_BEFORE = SeedScenario(
    name="leader-crash-before-scaling",
    seed=_SEED_001,
    section="Leader Transfer Before Scaling",
    title="Leader crash before",
    initial=(("S1", ("T1",)), ("S2", ("T2", "T3", "T4", "T5")), ("S3", ())),
    leaving=(),
    learner_version=1,
    note=(
        "'Cluster has 3 stream workers S1(leader), S2' names two workers, and only 'New member S4' is "
        "said to join, yet S3 joins the round with nothing: S3 is read as the third, idle worker. With "
        "the leader's memory lost nobody counts as new, so version 1.0 gives no learners and the load "
        "stays skewed, as the seed says; version 2.0 would move tasks to S3 and S4."
    ),
    rebalances=_rounds(
        "leader-crash-before-scaling",
        1,
        dict(
            title="#First Rebalance",
            narrative=(
                "New member S4 joins the group, at the same time S1 crash.\n"
                "S2 takes over the leader\n"
                "S2 ~ S4 join with following status\n"
                "\tS2(assigned: [T2, T3, T4, T5], revoked: [], learning: [])\n"
                "\tS3(assigned: [], revoked: [], learning: []) \n"
                "\tS4(assigned: [], revoked: [], learning: [])\n"
                "S2 performs task assignments:\n"
                "\tS2(assigned: [T2, T3, T4, T5], revoked: [], learning: [])\n"
                "\tS3(assigned: [T1], revoked: [], learning: [])\n"
                "\tS4(assigned: [], revoked: [], learning: [])\n"
                "Now the group reaches balance, although the eventual load is skewed."
            ),
            view=leader_view(joined("S2", ["T2", "T3", "T4", "T5"]), joined("S3"), joined("S4"), previous=None),
            expected=seed_answer(S2=(["T2", "T3", "T4", "T5"], []), S3=(["T1"], []), S4=([], [])),
            free_choice="which of S3 and S4 (both empty) takes the orphaned T1; the seed picks S3",
        ),
    ),
)

SCENARIOS: tuple[SeedScenario, ...] = (_SCALE_UP, _FROM_EMPTY, _SCALE_DOWN, _HOST_SWAP, _CRASH_DURING, _CRASH_BEFORE)
"""Every KIP-429 scenario of the seeds, in the order seed 001 tells them."""


def scenario(name: str) -> SeedScenario:
    """The scenario called ``name``; an :class:`~rebalproof.errors.InputError` listing the names otherwise."""
    for s in SCENARIOS:
        if s.name == name:
            return s
    raise InputError(f"no KIP-429 seed scenario '{name}'; the scenarios are {', '.join(s.name for s in SCENARIOS)}")


def all_rebalances() -> tuple[SeedRebalance, ...]:
    """Every seed rebalance of every scenario, scenario by scenario, round by round."""
    return tuple(r for s in SCENARIOS for r in s.rebalances)
