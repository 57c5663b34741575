"""The memory of a command that forks helper processes, counted honestly.

A helper forked from the checking process (the judge on the second core,
:mod:`rebalproof.properties.run_judge_worker`; a built-in assignor's answers computed ahead,
:mod:`rebalproof.model.answers_ahead`) shares the parent's pages until either writes them, so
the peak RSS the kernel reports for it counts the shared ones a second time. What it adds is its
*private* memory (``Private_Clean + Private_Dirty`` of ``/proc/self/smaps_rollup``), which each
helper measures when it ends (its memos only grow, so that is its peak) and sends back with the
parent's own peak at that moment (what the parent held while the helper lived) and the peak of
the children reaped before it. :func:`peak_with_helpers` puts them together.

Examples
--------
>>> peak_with_helpers(100, [(5, 80, 10), (5, 90, 20)])  # both helpers at once, then the parent alone
125
>>> peak_with_helpers(130, [(5, 80, 10)])
135
>>> peak_with_helpers(130, [])  # no helper ran
"""

from __future__ import annotations

import resource

__all__ = ["own_peak", "children_peak", "private_bytes", "peak_with_helpers"]


def own_peak() -> int:
    """This process's peak RSS so far (bytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def children_peak() -> int:
    """The peak RSS of the largest child reaped so far (bytes)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def private_bytes() -> int:
    """This process's private resident memory (bytes): ``Private_*`` of smaps_rollup, else its peak RSS."""
    try:
        with open("/proc/self/smaps_rollup") as f:
            return sum(int(line.split()[1]) * 1024 for line in f if line.startswith(("Private_Clean:", "Private_Dirty:")))
    except (OSError, ValueError, IndexError):
        return own_peak()


def peak_with_helpers(own: int, memories) -> int | None:
    """The command's peak RSS (bytes) from this process's peak ``own`` and each ended helper's
    ``(children reaped before it, the parent's peak when it ended, its private bytes)``; None
    when no helper ran.

    Counted as if every helper lived at once, at the latest parent peak among their ends (an
    upper bound of what ran together); after them the parent alone (the graph analysis).
    Children reaped before the helpers (none in ``check``) count at their peak, as
    :func:`rebalproof.model.explorer._peak_rss` counts them.
    """
    memories = [m for m in memories if m is not None]
    if not memories:
        return None
    children = min(m[0] for m in memories)
    own_then = max(m[1] for m in memories)
    private = sum(m[2] for m in memories)
    return max(own, own_then + private) + children
