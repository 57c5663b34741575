"""Shared by the test assignor programs: a simple correct assignor and the JSON-lines loop.

``assign`` deals the tasks round-robin over the non-leaving members (all members when every
one is leaving), actives only, in id order. It is correct (one active per task) but makes no
other promise. If ``REBALPROOF_TEST_STARTS`` names a file, each start appends its pid there,
so tests can count process starts from the outside.
"""

import json
import os
import sys


def assign(obj: dict) -> dict:
    members = [m["id"] for m in obj["members"]]
    staying = [m["id"] for m in obj["members"] if not m.get("leaving", False)] or members
    out = {m: {"active": [], "standby": [], "warmup": []} for m in members}
    for i, task in enumerate(obj["tasks"]):
        if staying:
            out[staying[i % len(staying)]]["active"].append(task["id"])
    return {"assignment": out, "probing_rebalance": False}


def note_start() -> None:
    path = os.environ.get("REBALPROOF_TEST_STARTS")
    if path:
        with open(path, "a") as handle:
            handle.write(f"{os.getpid()}\n")


def serve(answer=assign) -> None:
    """Answer one line per input line until end of input."""
    note_start()
    for line in sys.stdin:
        sys.stdout.write(json.dumps(answer(json.loads(line))) + "\n")
        sys.stdout.flush()
