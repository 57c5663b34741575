"""``keep_then_deal`` (tests/assignors/red10_sticky.py), except that it crashes when asked about a
group whose members are the ones the leader remembers and whose every task has an active owner.
At ``--events 1`` that is only a rebalance some member requested in a settled group
(``GroupModel.requested_probes``): not a membership change, nor a cooperative follow-up (a revoked
task has no owner there); with two events a join and a leave before the rebalance show the same
view. Its failure shows only on the requested rebalances."""

from __future__ import annotations

from tests.assignors.red10_sticky import keep_then_deal


def assign(view: dict) -> dict:
    members = sorted(m["id"] for m in view["members"])
    owned = {t for m in view["members"] for t in m.get("active", [])}
    if view.get("previous_members") is not None and sorted(view["previous_members"]) == members and owned == {t["id"] for t in view["tasks"]}:
        raise RuntimeError("cannot answer a group that nothing changed in")
    return keep_then_deal(view)
