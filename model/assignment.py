"""An assignor's answer: the contract's ``Assignment``.

Lists are kept sorted but *not* deduplicated: a task listed twice is something the
properties must be able to see (``no-colocation``), not something to hide.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rebalproof.model.names import id_key

__all__ = ["ROLES", "MemberAssignment", "Assignment"]

ROLES = ("active", "standby", "warmup")


def _sorted(ids) -> tuple[str, ...]:
    return tuple(sorted(ids, key=id_key))


@dataclass(frozen=True, kw_only=True, slots=True)
class MemberAssignment:
    """What one member is told to hold after the rebalance."""

    active: tuple[str, ...] = ()
    standby: tuple[str, ...] = ()
    warmup: tuple[str, ...] = ()

    def __post_init__(self):
        for role in ROLES:
            object.__setattr__(self, role, _sorted(getattr(self, role)))

    @property
    def copies(self) -> tuple[str, ...]:
        return self.active + self.standby + self.warmup

    def role_of(self, task_id: str) -> str | None:
        for role in ROLES:
            if task_id in getattr(self, role):
                return role
        return None


@dataclass(frozen=True, kw_only=True, slots=True)
class Assignment:
    """Member id -> :class:`MemberAssignment`, plus whether a probing rebalance is asked for."""

    members: tuple[tuple[str, MemberAssignment], ...] = ()
    probing_rebalance: bool = False
    _by_id: dict = field(init=False, repr=False, compare=False, hash=False)
    #: role -> task -> holders, built at the first :meth:`holders` call (the judges ask it per task and role)
    _holders: dict | None = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self):
        items = self.members.items() if isinstance(self.members, dict) else self.members
        items = tuple(sorted(items, key=lambda p: id_key(p[0])))
        object.__setattr__(self, "members", items)
        object.__setattr__(self, "_by_id", dict(items))
        object.__setattr__(self, "_holders", None)

    @classmethod
    def build(cls, roles: dict[str, dict[str, list[str]]], *, probing_rebalance: bool = False) -> "Assignment":
        """From ``{member: {"active": [...], "standby": [...], "warmup": [...]}}``."""
        return cls(
            members={m: MemberAssignment(**{r: tuple(v.get(r, ())) for r in ROLES}) for m, v in roles.items()},
            probing_rebalance=probing_rebalance,
        )

    def of(self, member_id: str) -> MemberAssignment:
        """The member's assignment; an empty one for a member the answer does not name."""
        return self._by_id.get(member_id, MemberAssignment())

    @property
    def member_ids(self) -> tuple[str, ...]:
        return tuple(m for m, _ in self.members)

    def holders(self, task_id: str, role: str) -> tuple[str, ...]:
        """Members holding ``task_id`` in ``role``, in id order, once per listing (duplicates kept)."""
        index = self._holders
        if index is None:
            index = {r: {} for r in ROLES}
            for m, a in self.members:  # in id order; a member's lists are sorted, so its duplicates are adjacent
                for r in ROLES:
                    by_task = index[r]
                    for t in getattr(a, r):
                        by_task[t] = by_task.get(t, ()) + (m,)
            object.__setattr__(self, "_holders", index)
        return index[role].get(task_id, ())

    def actives_of(self, task_id: str) -> tuple[str, ...]:
        return self.holders(task_id, "active")

    def copies_of(self, task_id: str) -> tuple[tuple[str, str], ...]:
        """(member, role) for every copy of ``task_id``."""
        return tuple((m, r) for m, a in self.members for r in ROLES for t in getattr(a, r) if t == task_id)

    def same_layout(self, other: "Assignment") -> bool:
        """Equal member by member, ignoring ``probing_rebalance`` and members with nothing."""
        def nonempty(a):
            return {m: x for m, x in a.members if x.copies}
        return nonempty(self) == nonempty(other)
