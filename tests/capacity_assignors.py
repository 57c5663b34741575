"""Assignors whose bug needs a member with two or more stream threads (issue 14).

Speaking the ``py:`` contract (a dict in, a dict out), as an implementation under test would:
run from the repository root as ``py:tests.capacity_assignors:<name>``.
"""

from __future__ import annotations

from examples.ha_assignor import assign as _example_ha

__all__ = ["by_instance", "two_copies"]


def by_instance(request: dict) -> dict:
    """The example KIP-441 assignor, except that it balances by instance, not by thread: it
    reads every member as 1 stream thread. With 1 thread everywhere it is the example exactly;
    a member with 2 threads gets no more tasks than one with 1 (KIP-441 "Defining 'balance'"
    counts per thread: seed 002 "instead of letting one thread have more tasks than another")."""
    flat = dict(request, members=[dict(m, capacity=1) for m in request["members"]])
    return _example_ha(flat)


def two_copies(request: dict) -> dict:
    """The example KIP-441 assignor, except that a member with two or more threads also keeps a
    standby of its first active task, as if each thread could host its own copy (seed 002: "A
    single instance (not thread) can only host one of those, either the active task or one of the
    standby tasks"). With 1 thread everywhere it is the example exactly."""
    answer = _example_ha(request)
    threads = {m["id"]: m.get("capacity", 1) for m in request["members"]}
    for member, roles in answer["assignment"].items():
        stateful = [t for t in roles["active"] if t not in roles["standby"]]
        if threads.get(member, 1) >= 2 and stateful:
            roles["standby"] = roles["standby"] + [stateful[0]]
    return answer
