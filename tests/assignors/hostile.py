"""Answers every input with a line of hostile JSON (the reading contract's limits). Modes (argv[1]):

- ``deep``: an Assignment whose ``probing_rebalance`` is nested 100,000 lists deep;
- ``huge-int``: ``probing_rebalance`` a 5,000-digit integer;
- ``nan``: ``probing_rebalance`` NaN;
- ``dup-key``: ``"assignment"`` given twice.
"""

import json
import sys

from _common import assign, note_start

if __name__ == "__main__":
    note_start()
    mode = sys.argv[1]
    for line in sys.stdin:
        answer = json.dumps(assign(json.loads(line))["assignment"])
        value = {"deep": "[" * 100_000 + "]" * 100_000, "huge-int": "1" + "0" * 5000, "nan": "NaN"}.get(mode, "false")
        out = '{"assignment": %s, "probing_rebalance": %s}' % (answer, value)
        if mode == "dup-key":
            out = '{"assignment": {}, "assignment": %s}' % answer
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
