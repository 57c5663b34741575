"""An exec: assignor that never stops asking for probing rebalances (for the explorer's tests).

Its assignments are fine: round-robin actives over the non-leaving members in id order, the
same answer for the same members, so the group keeps one layout. But every answer sets
``probing_rebalance``, so the leader probes forever: ``converges`` must catch it as a fair
cycle that never settles, while ``no-shuffle-cycle`` holds (the layout never changes).
"""

import json
import sys


def answer(obj: dict) -> dict:
    members = [m["id"] for m in obj["members"]]
    staying = [m["id"] for m in obj["members"] if not m.get("leaving", False)] or members
    out = {m: {"active": [], "standby": [], "warmup": []} for m in members}
    for i, task in enumerate(obj["tasks"]):
        out[staying[i % len(staying)]]["active"].append(task["id"])
    return {"assignment": out, "probing_rebalance": True}


if __name__ == "__main__":
    for line in sys.stdin:
        sys.stdout.write(json.dumps(answer(json.loads(line))) + "\n")
        sys.stdout.flush()
