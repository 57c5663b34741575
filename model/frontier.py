"""The explorer's BFS queue: states waiting to be expanded, as packed records or as objects.

A breadth-first run holds up to a third of its states in the queue at once; as Python objects
(a state tuple, its members tuple, the ``(index, state)`` pair) that is about 300 bytes a
queued state, the largest part of a million-state run's memory. A model that can *pack* its
states (:meth:`rebalproof.model.group_model.GroupModel.packer`) has them queued as fixed-width
records in one ``bytearray`` instead: each part of a state that recurs across states (a member,
the pending assignments, the leader's memory and the counters) is interned once per run and
named by a 32-bit code, so a queued state costs ``4 * (3 + instances)`` bytes. Unpacking gives a
state equal to the one packed (every part is the very value interned), so the run is the same
state for state; the states unpacked share their parts, as :meth:`GroupModel.compact` makes
them.

Either queue is first in, first out, with :meth:`peek` (the next index, for progress and for a
run stopped with states still queued) and ``len``.

Examples
--------
>>> from rebalproof.model.group_state import GroupState, MemberState
>>> packer = GroupStatePacker(instances=2)
>>> queue = PackedFrontier(packer)
>>> s = GroupState(members=(MemberState(id="I1", active=("0_0",)),), leader="I1", memory=None, spawned=1, events=0)
>>> queue.push(7, s)
>>> len(queue), queue.peek()
(1, 7)
>>> idx, back = queue.pop()
>>> idx, back == s, len(queue)
(7, True, 0)
"""

from __future__ import annotations

import struct
from collections import deque

from rebalproof.model.group_state import GroupState

__all__ = ["ObjectFrontier", "PackedFrontier", "GroupStatePacker"]


class ObjectFrontier:
    """The queue as a deque of ``(index, state)``, states kept as objects (``compact``-ed if given)."""

    def __init__(self, compact=None):
        self._queue: deque = deque()
        self._compact = compact

    def __len__(self) -> int:
        return len(self._queue)

    def push(self, idx: int, state) -> None:
        self._queue.append((idx, state if self._compact is None else self._compact(state)))

    def push_kept(self, idx: int, state) -> None:
        """Queue ``state`` as it is (an initial state)."""
        self._queue.append((idx, state))

    def pop(self):
        return self._queue.popleft()

    def peek(self) -> int:
        return self._queue[0][0]


class _Interner:
    """Value <-> dense code (codes from 1; 0 is kept for "none")."""

    __slots__ = ("codes", "values")

    def __init__(self):
        self.codes: dict = {}
        self.values: list = [None]

    def code(self, value) -> int:
        c = self.codes.get(value)
        if c is None:
            c = self.codes[value] = len(self.values)
            self.values.append(value)
        return c

    def __len__(self) -> int:
        return len(self.values) - 1


class GroupStatePacker:
    """Packs a :class:`GroupState` of at most ``instances`` members into ``4 * (2 + instances)``
    bytes and back (see the module docstring); the tables live as long as the packer (one run)."""

    def __init__(self, *, instances: int):
        self.slots = instances
        self._members = _Interner()
        self._heads = _Interner()
        self._pending = _Interner()
        self.struct = struct.Struct(f"<II{instances}I")

    @property
    def size(self) -> int:
        return self.struct.size

    def pack_into(self, buf: bytearray, state: GroupState, prefix: bytes = b"") -> None:
        """Append the record of ``state`` to ``buf`` (after ``prefix``)."""
        members = state.members
        if len(members) > self.slots:
            raise ValueError(f"a state with {len(members)} members does not fit a packer for {self.slots}")
        code = self._members.code
        codes = [code(m) for m in members]
        codes.extend([0] * (self.slots - len(codes)))
        head = self._heads.code((state.leader, state.memory, state.spawned, state.events, state.triggers, state.probe))
        buf += prefix
        buf += self.struct.pack(head, self._pending.code(state.pending), *codes)

    def unpack_from(self, buf, offset: int) -> GroupState:
        head, pending, *codes = self.struct.unpack_from(buf, offset)
        values = self._members.values
        members = tuple(values[c] for c in codes if c)
        leader, memory, spawned, events, triggers, probe = self._heads.values[head]
        return GroupState(members, leader, memory, spawned, events, triggers, self._pending.values[pending], probe)

    def tables(self) -> tuple[list, list, list]:
        """The values interned so far (members, heads, pending), by code: with the records, what
        another process needs to unpack them (:meth:`load_tables`)."""
        return self._members.values, self._heads.values, self._pending.values

    def load_tables(self, tables: tuple[list, list, list]) -> None:
        """Unpack records packed by another packer whose :meth:`tables` these are (unpacking only)."""
        self._members.values, self._heads.values, self._pending.values = (list(t) for t in tables)

    def table_sizes(self) -> tuple[int, int, int]:
        """Distinct members, heads (leader, memory, counters, triggers, probe) and pending tuples interned."""
        return len(self._members), len(self._heads), len(self._pending)


_INDEX = struct.Struct("<I")


class PackedFrontier:
    """The queue as packed records in one ``bytearray``: a 32-bit state index, then the
    packer's record. The consumed front is cut off once it is the larger half."""

    def __init__(self, packer):
        self.packer = packer
        self._record = packer.size + _INDEX.size
        self._buf = bytearray()
        self._read = 0

    def __len__(self) -> int:
        return (len(self._buf) - self._read) // self._record

    def push(self, idx: int, state) -> None:
        self.packer.pack_into(self._buf, state, _INDEX.pack(idx))

    push_kept = push

    def pop(self):
        buf, read = self._buf, self._read
        idx = _INDEX.unpack_from(buf, read)[0]
        state = self.packer.unpack_from(buf, read + 4)
        read += self._record
        if read >= 1 << 20 and read * 2 >= len(buf):
            del buf[:read]
            read = 0
        self._read = read
        return idx, state

    def peek(self) -> int:
        return _INDEX.unpack_from(self._buf, self._read)[0]
