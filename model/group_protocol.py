"""Member-side protocols: what members do with their tasks around a rebalance.

Three protocols from the seeds, each a frozen value built by :func:`protocol`:

``eager`` (seed 001 "Stop-The-World Effect")
    "Join group with all current assigned tasks revoked", wait for the assignment, start it.
    Members still *report* what they held (Kafka's prevTasks), so a sticky assignor can keep
    tasks in place; nobody owns anything between the join and the delivery.
``cooperative`` (seed 002, "After KIP-429, this changes to ...")
    Members join "optimistically keeping all assigned tasks"; the leader hands a moved active
    to its new owner only after the old owner revoked it: in the rebalance that decides the
    move, the new owner is not given it; the old owner revokes it on delivery and "rejoin[s]
    group immediately" (seed 001, KIP-415 recap), and the follow-up rebalance hands it over.
``learner`` (seed 001, KIP-429 learner design)
    Cooperative, plus: "the task owners will revoke the being learned tasks and join group"
    at *every* rebalance (being learned = another member holds it as a learner, i.e. in the
    ``warmup`` role), so a ready learner takes over at once without a second round; a member
    whose learners are ready rejoins to say so (batched: once all its learners are ready;
    ``partial_rebalance``, v3 ``learner.partial.rebalance``: as soon as one is); members can
    be marked leaving (v2) and shut down "once received the instruction to revoke all its
    active tasks"; ``scale_down_timeout`` (v2) lets a leaving member shut down at any time.

Deliberately broken variants, as options, for the tests that must find them:

``early_handover`` (cooperative or learner)
    the leader hands a moved active to its new owner at once, before the old owner revoked it
    (what the cooperative protocol exists to prevent).

Options are given as ``name:key=value,...`` (``learner:partial_rebalance=true``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from rebalproof.errors import InputError

__all__ = ["Protocol", "protocol", "PROTOCOL_NAMES", "parse_protocol"]

PROTOCOL_NAMES = ("eager", "cooperative", "learner")


@dataclass(frozen=True, kw_only=True)
class Protocol:
    """A member-side protocol as data (see the module docstring)."""

    name: str
    #: what a member revokes when it joins: "all" (eager), "none" (cooperative), "being-learned" (learner)
    revoke_at_join: str
    #: hand a moved active over only after its owner revoked it (cooperative)
    handover_after_revoke: bool
    #: a member that revoked an active on delivery rejoins at once (follow-up rebalance)
    rejoin_after_revoke: bool
    #: members with ready learners rejoin (KIP-429)
    ready_rejoin: bool
    #: v3 learner.partial.rebalance: rejoin when one learner is ready, not when all are
    partial_rebalance: bool = False
    #: v2: members can be marked leaving
    leaving: bool = False
    #: v2: a leaving member may be cut off by the scale-down timeout
    scale_down_timeout: bool = False

    @property
    def spec(self) -> str:
        """The name with the options that differ from the protocol's defaults."""
        base = protocol(self.name)
        changed = []
        for f in fields(self):
            if f.name in ("name", "revoke_at_join", "handover_after_revoke", "rejoin_after_revoke", "ready_rejoin"):
                continue
            if getattr(self, f.name) != getattr(base, f.name):
                changed.append(f"{f.name}={str(getattr(self, f.name)).lower()}")
        if self.handover_after_revoke != base.handover_after_revoke:
            changed.insert(0, "early_handover=true")
        return self.name + (":" + ",".join(changed) if changed else "")

    @property
    def broken(self) -> bool:
        """True for a deliberately broken variant."""
        return self.handover_after_revoke != protocol(self.name).handover_after_revoke

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


_OPTIONS = {
    "eager": (),
    "cooperative": ("early_handover",),
    "learner": ("early_handover", "partial_rebalance", "leaving", "scale_down_timeout"),
}


def protocol(name: str, **options) -> Protocol:
    """The protocol called ``name`` with ``options`` (booleans); an :class:`InputError` otherwise."""
    if name not in PROTOCOL_NAMES:
        raise InputError(f"unknown protocol '{name}'; the protocols are {', '.join(PROTOCOL_NAMES)}")
    for key in options:
        if key not in _OPTIONS[name]:
            known = ", ".join(_OPTIONS[name]) or "none"
            raise InputError(f"protocol '{name}' has no option '{key}'; its options are {known}")
    early = bool(options.get("early_handover", False))
    if name == "eager":
        return Protocol(
            name="eager", revoke_at_join="all", handover_after_revoke=False, rejoin_after_revoke=False, ready_rejoin=False
        )
    if name == "cooperative":
        return Protocol(
            name="cooperative",
            revoke_at_join="none",
            handover_after_revoke=not early,
            rejoin_after_revoke=True,
            ready_rejoin=False,
        )
    return Protocol(
        name="learner",
        revoke_at_join="being-learned",
        handover_after_revoke=not early,
        rejoin_after_revoke=True,
        ready_rejoin=True,
        partial_rebalance=bool(options.get("partial_rebalance", False)),
        leaving=bool(options.get("leaving", True)),
        scale_down_timeout=bool(options.get("scale_down_timeout", False)),
    )


def parse_protocol(spec: str) -> Protocol:
    """``name`` or ``name:key=value,...`` with boolean values (true/false/1/0/yes/no)."""
    name, _, text = spec.strip().partition(":")
    options = {}
    if text:
        for part in text.split(","):
            key, sep, value = part.partition("=")
            value = value.strip().lower()
            if not sep or value not in ("true", "false", "1", "0", "yes", "no"):
                raise InputError(f"protocol option '{part}' must be key=true or key=false")
            options[key.strip()] = value in ("true", "1", "yes")
    return protocol(name, **options)
