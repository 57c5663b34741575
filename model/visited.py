"""The explorer's visited set: 64-bit fingerprint -> dense state index, in about 20 bytes a state.

A Python ``dict`` of int to int costs about 110 bytes an entry (the table, a boxed 64-bit key,
a boxed index); a million-state run spends more on it than on the whole state graph. Here only
the newest entries live in a dict (the *young* generation, at most ``young_limit``); the rest
(the *old* generation) are two flat arrays sorted by fingerprint -- the fingerprints
(``array('Q')``, 8 bytes) and their indices (``array('q')``, 8 bytes) -- searched by
:func:`bisect.bisect_left` in C. When the young generation is full it is merged into the old
one with numpy (a sort of the young keys and one linear merge), so the arrays never hold a
Python object.

Examples
--------
>>> seen = Visited(young_limit=2)
>>> for idx, fp in enumerate([7, 3, 2**64 - 1, 5]):
...     seen.add(fp, idx)
>>> [seen.get(fp) for fp in (3, 5, 7, 2**64 - 1, 4)]
[1, 3, 0, 2, None]
>>> len(seen), seen.old_size
(4, 4)
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left

import numpy as np

__all__ = ["Visited"]


class Visited:
    """Fingerprint -> index with a young dict and an old sorted-array generation (see the module)."""

    def __init__(self, *, young_limit: int = 1 << 16):
        self.young_limit = young_limit
        self.young: dict[int, int] = {}
        self._old_fp = array("Q")
        self._old_idx = array("q")

    def __len__(self) -> int:
        return len(self.young) + len(self._old_fp)

    @property
    def old_size(self) -> int:
        return len(self._old_fp)

    def get(self, fp: int) -> int | None:
        """The index of ``fp``, or None when it was never added."""
        j = self.young.get(fp)
        if j is not None:
            return j
        old = self._old_fp
        p = bisect_left(old, fp)
        if p < len(old) and old[p] == fp:
            return self._old_idx[p]
        return None

    def add(self, fp: int, idx: int) -> None:
        """Record ``fp`` (not yet present) at ``idx``."""
        young = self.young
        young[fp] = idx
        if len(young) >= self.young_limit:
            self.merge()

    def merge(self) -> None:
        """Move the young generation into the sorted arrays."""
        young = self.young
        if not young:
            return
        n = len(young)
        fps = np.fromiter(young.keys(), dtype=np.uint64, count=n)
        idx = np.fromiter(young.values(), dtype=np.int64, count=n)
        order = np.argsort(fps, kind="stable")
        fps, idx = fps[order], idx[order]
        old_fp = np.frombuffer(self._old_fp, dtype=np.uint64) if len(self._old_fp) else np.empty(0, np.uint64)
        old_idx = np.frombuffer(self._old_idx, dtype=np.int64) if len(self._old_idx) else np.empty(0, np.int64)
        at = np.searchsorted(old_fp, fps) + np.arange(n)  # where each young key lands in the merged order
        total = len(old_fp) + n
        merged_fp = np.empty(total, dtype=np.uint64)
        merged_idx = np.empty(total, dtype=np.int64)
        is_young = np.zeros(total, dtype=bool)
        is_young[at] = True
        merged_fp[at], merged_idx[at] = fps, idx
        merged_fp[~is_young], merged_idx[~is_young] = old_fp, old_idx
        del old_fp, old_idx  # release the buffers before the arrays are replaced
        self._old_fp = _as_array("Q", merged_fp)
        self._old_idx = _as_array("q", merged_idx)
        young.clear()

    def nbytes(self) -> int:
        """Bytes held: the young dict (table, boxed keys and indices) and the old arrays."""
        young = self.young
        boxed = len(young) * (sys.getsizeof(2**63) + sys.getsizeof(2**40))
        return sys.getsizeof(young) + boxed + self._old_fp.itemsize * len(self._old_fp) + self._old_idx.itemsize * len(self._old_idx)


def _as_array(typecode: str, values: np.ndarray) -> array:
    out = array(typecode)
    out.frombytes(values.tobytes())
    return out
