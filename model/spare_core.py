"""Whether the machine has a core to spare for a helper process: its idle time over a window.

The checking process forks helpers for the second core (the judge,
:mod:`rebalproof.properties.run_judge_worker`; a built-in assignor's answers computed ahead,
:mod:`rebalproof.model.answers_ahead`). A helper pays only where a core is idle: it then does
its share while the checking process goes on. Where every core is already busy (other jobs; the
test suite's three processes on two cores) the helper competes with the checking process for the
same cores, and what it costs on top of the work it takes over (each view rebuilt from its key,
the pipe's pickles, the fork's copied pages: 10-15% of a check's CPU) is lost: measured on the
2-core machine at load average ~4, tests/test_manifest.py's 75 checks took 71 CPU-s and 76 s
with their helpers, 63 CPU-s and 67 s without.

So a helper starts only when, on average since :func:`cpu_times` was read for it (when its run
began), at least :data:`SPARE` of a core was idle (Linux's ``/proc/stat``, all cores). Where the
window is too short to tell (less than :data:`MIN_TICKS` clock ticks over all cores), the
runnable threads of ``/proc/loadavg`` decide at that instant (this process's one included). Where
neither file exists a core counts as spare, as before. No result depends on it: a run with or
without its helpers gives the same states, verdicts, first discoveries and counts
(tests/test_judge_worker.py, tests/test_answers_ahead.py).

Examples
--------
>>> spare_between((100, 1000), (150, 1100), cores=2)  # 50 of 100 ticks idle: one core
True
>>> spare_between((100, 1000), (110, 1100), cores=2)  # a fifth of a core
False
"""

from __future__ import annotations

import os

__all__ = ["cpu_times", "core_spare", "spare_between", "SPARE", "MIN_TICKS"]

#: The idle share of one core, on average over the window, that counts as a core to spare.
SPARE = 0.5
#: Clock ticks (over all cores) a window needs before its idle share is read (0.1 s of two cores).
MIN_TICKS = 20


def cpu_times() -> tuple[int, int] | None:
    """(idle, total) clock ticks of all the machine's cores so far, or None where unknown."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 5:
        return None
    ticks = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    return idle, sum(ticks)


def spare_between(before: tuple[int, int], after: tuple[int, int], *, cores: int) -> bool:
    """Whether at least :data:`SPARE` of a core was idle on average between two :func:`cpu_times`."""
    idle, total = after[0] - before[0], after[1] - before[1]
    return total > 0 and idle * cores >= SPARE * total


def core_spare(since: tuple[int, int] | None) -> bool:
    """Whether a core is spare now for a helper; ``since`` is :func:`cpu_times` at the run's start."""
    cores = os.cpu_count() or 1
    now = cpu_times()
    if since is not None and now is not None and now[1] - since[1] >= MIN_TICKS:
        return spare_between(since, now, cores=cores)
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            running = int(f.read().split()[3].split("/")[0])  # runnable now, this thread included
    except (OSError, IndexError, ValueError):
        return True
    return running < cores
