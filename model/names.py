"""Deterministic ordering of member and task ids.

Ids are compared "naturally": runs of digits as numbers, so ``I2 < I10`` and
``0_2 < 0_10``. Every place where order reaches output sorts with :func:`id_key`.
"""

import re
from functools import lru_cache

__all__ = ["id_key", "sorted_ids", "subtopology_of"]

_RUNS = re.compile(r"(\d+)")


@lru_cache(maxsize=65536)
def id_key(identifier: str) -> tuple:
    """Sort key ordering ids naturally; ties broken by the plain string."""
    parts = _RUNS.split(identifier)
    key = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p != "")
    return (key, identifier)


def sorted_ids(ids) -> tuple[str, ...]:
    """The ids in natural order, as a tuple."""
    ids = tuple(ids)
    if len(ids) < 2:
        return ids  # nothing to order (most calls: a member's one or no task of a role)
    return tuple(sorted(ids, key=id_key))


def subtopology_of(task_id: str) -> str:
    """A task ``S_P`` belongs to subtopology ``S``: the part before the first ``_``, or the whole id."""
    return task_id.split("_", 1)[0]
