"""Red team 12's standby churn (2026-11-29), written again as a pure function: ``keep_then_deal``
(tests/assignors/red10_sticky.py) whose standbys move on whenever the leader is asked.

``rotate_standbys`` gives each stateful task's standby to the next member, in natural order after
the member holding it now, that does not run the task (the first such member when nobody holds
one). A settled layout is dealt again with every standby moved: seed 002, requirement 5, "if the
current assignment is already balanced, it must not alter the assignment". Red team 12's forms
(standbys re-chosen at random, their order flipped on every other call) passed the sticky and
eager defaults, where the leader was shown a settled layout on 2 views; a rebalance requested in
a quiescent group (``GroupModel.requested_probes``) shows it there now.
"""

from __future__ import annotations

from tests.assignors.red10_sticky import _nat, keep_then_deal


def rotate_standbys(view: dict) -> dict:
    answer = keep_then_deal(view)
    out = answer["assignment"]
    ids = sorted((m["id"] for m in view["members"] if not m.get("leaving")), key=_nat)
    held = {t: m["id"] for m in view["members"] for t in m.get("standby", [])}
    for t in sorted({t for x in out.values() for t in x["standby"]}, key=_nat):
        owner = next(m for m in ids if t in out[m]["active"])
        holders = [m for m in ids if t in out[m]["standby"]]
        if len(holders) != 1:
            continue
        start = ids.index(held[t]) + 1 if held.get(t) in ids else 0
        nxt = next((ids[(start + k) % len(ids)] for k in range(len(ids)) if ids[(start + k) % len(ids)] not in (owner,)), None)
        if nxt is not None and nxt != holders[0]:
            out[holders[0]]["standby"].remove(t)
            out[nxt]["standby"].append(t)
    return answer
