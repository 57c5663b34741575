"""The explorer's fast paths give the slow paths' values (#11 item 1).

- :class:`~rebalproof.model.group_fingerprint.Fingerprinter` memoises members' texts: its
  fingerprints are :func:`~rebalproof.model.group_fingerprint.fingerprint`'s, before and
  after pickling (the Spark engine ships it), on every state of a real exploration.
- :func:`~rebalproof.model.assignors.ha_flow.quota_box` works in integers with a memo: its
  boxes are the ones the water level gives in exact fractions (the oracle below).
"""

from __future__ import annotations

import math
import pickle
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from rebalproof.model.assignors import builtin
from rebalproof.model.assignors.ha_flow import quota_box
from rebalproof.model.explorer import explore
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_fingerprint import Fingerprinter, encode, fingerprint
from rebalproof.model.group_model import GroupModel
from rebalproof.model.group_protocol import protocol


def test_memoised_fingerprints_are_the_plain_ones_on_every_explored_state():
    model = GroupModel(protocol=protocol("cooperative"), bounds=Bounds(events=1), assignor=builtin("ha").make(), assignor_name="ha")
    exp = explore(model)
    assert exp.complete and exp.states > 150
    fresh = pickle.loads(pickle.dumps(exp.fingerprinter))
    assert fresh._members == {}
    for idx in range(exp.states):
        state = exp.state_at(idx)
        assert exp.fingerprinter.encode(state) == encode(state)
        assert exp.fingerprints[idx] == fingerprint(state) == fresh(state)


def _fraction_box(total, caps, start):
    """The water level in :class:`~fractions.Fraction` (the implementation before integers)."""
    members = sorted(caps)

    def room(level):
        return sum(max(0, math.floor(level * caps[m]) - start.get(m, 0)) for m in members)

    level = Fraction(0)
    while room(level) < total:
        level = min(Fraction(math.floor(level * caps[m]) + 1, caps[m]) for m in members)
    return {
        m: (max(0, math.ceil(level * caps[m]) - 1 - start.get(m, 0)), max(0, math.floor(level * caps[m]) - start.get(m, 0)))
        for m in members
    }


@settings(max_examples=300)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 5)), min_size=1, max_size=5), st.integers(0, 12), st.booleans())
def test_integer_quota_box_is_the_fraction_one(members, total, with_start):
    caps = {f"I{i}": c for i, (c, _) in enumerate(members)}
    start = {f"I{i}": s for i, (_, s) in enumerate(members)} if with_start else {}
    want = _fraction_box(total, caps, start)
    assert quota_box(total, caps, start=start or None) == want
    assert quota_box(total, caps, start=start or None) == want  # the memo's answer too
