"""An exec: assignor that moves one task back and forth forever (for the explorer's tests).

Round-robin actives, except the first task: while a member owns it, it is given to the next
member in id order (cyclically); while nobody owns it (its owner revoked it, or left), it goes
to the member that reports the least state for it (no state first, then the lowest id). It asks
for a probing rebalance whenever its answer moves an active, so the group never settles and
its stable states keep changing: ``converges`` and ``no-shuffle-cycle`` must both catch it.
"""

import json
import sys


def answer(obj: dict) -> dict:
    members = [m["id"] for m in obj["members"]]
    out = {m: {"active": [], "standby": [], "warmup": []} for m in members}
    tasks = [t["id"] for t in obj["tasks"]]
    if not members or not tasks:
        return {"assignment": out, "probing_rebalance": False}
    for i, t in enumerate(tasks[1:]):
        out[members[i % len(members)]]["active"].append(t)
    first = tasks[0]
    owners = [m["id"] for m in obj["members"] if first in m.get("active", [])]
    if owners:
        target = members[(members.index(owners[0]) + 1) % len(members)]
    else:
        def state(m):
            lag = m.get("lags", {}).get(first)
            return (0 if lag is None else 1, -(lag or 0), m["id"])
        target = min(obj["members"], key=state)["id"]
    out[target]["active"].append(first)
    moved = any(sorted(out[m["id"]]["active"]) != sorted(m.get("active", [])) for m in obj["members"])
    return {"assignment": out, "probing_rebalance": moved}


if __name__ == "__main__":
    for line in sys.stdin:
        sys.stdout.write(json.dumps(answer(json.loads(line))) + "\n")
        sys.stdout.flush()
