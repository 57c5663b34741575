"""Red team 13 (2026-11-29): bugs that show only when the leader is asked again with nothing
changed while an active is still restoring, written again from its report.

The first version of the requested rebalances (``GroupModel.requested_probes``) asked only views
meeting ``fixpoint``'s premise (every stateful active caught up among the rest), so both passed;
every quiescent view is asked now.

- ``swap_stateless_while_restoring``: ``keep_then_deal`` (tests/assignors/red10_sticky.py), but
  asked with the members the leader remembers, every task owned and some stateful active still
  restoring, it passes every stateless task on to the next member in natural order (seed 002,
  requirement 6: "it should try not to shuffle stateless tasks randomly among nodes"): ``stable``
  at ``--rules sticky --stateless 2``.
- ``restoring_to_least_loaded``: the example ``ha`` assignor, but asked the same way it hands each
  restoring active to the member with the fewest actives, lags ignored (seed 002: "If there is no
  such instance, then it assigns the active task to the instance that is closest to catching up"):
  ``caught-up-active`` at ``--standbys 0 --events 3``.
"""

from __future__ import annotations

from examples.ha_assignor import assign as example
from examples.ha_assignor import id_key
from tests.assignors.red10_sticky import keep_then_deal


def _asked_again_while_restoring(view: dict) -> list[tuple[str, str]]:
    """(task, owner) of every restoring stateful active, where the view shows the members the
    leader remembers and every task owned; else none."""
    members = sorted(m["id"] for m in view["members"])
    owned = {t for m in view["members"] for t in m.get("active", [])}
    if view.get("previous_members") is None or sorted(view["previous_members"]) != members or owned != {t["id"] for t in view["tasks"]}:
        return []
    limit = view.get("config", {}).get("acceptable_recovery_lag", 10000)
    stateful = {t["id"] for t in view["tasks"] if t.get("stateful", True)}
    return [(t, m["id"]) for m in view["members"] for t in m.get("active", [])
            if t in stateful and (m.get("lags") or {}).get(t, limit + 1) > limit]


def swap_stateless_while_restoring(view: dict) -> dict:
    answer = keep_then_deal(view)
    if not _asked_again_while_restoring(view):
        return answer
    out = answer["assignment"]
    ids = sorted(out, key=id_key)
    for t in sorted((t["id"] for t in view["tasks"] if not t.get("stateful", True)), key=id_key):
        holder = next(m for m in ids if t in out[m]["active"])
        out[holder]["active"].remove(t)
        out[ids[(ids.index(holder) + 1) % len(ids)]]["active"].append(t)
    return answer


def restoring_to_least_loaded(view: dict) -> dict:
    answer = example(view)
    restoring = _asked_again_while_restoring(view)
    if not restoring or answer.get("probing_rebalance") or any(x.get("warmup") for x in answer["assignment"].values()):
        return answer
    out = answer["assignment"]
    for task, _ in sorted(restoring, key=lambda p: id_key(p[0])):
        holder = next(m for m, x in out.items() if task in x["active"])
        least = min(sorted(out, key=id_key), key=lambda m: len(out[m]["active"]))
        if least != holder and task not in out[least].get("standby", []):
            out[holder]["active"].remove(task)
            out[least]["active"].append(task)
    return answer
