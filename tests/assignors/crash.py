"""Answers the first N inputs (argv[1], default 0), then crashes: a message on stderr, exit code 3."""

import json
import sys

from _common import assign, note_start

if __name__ == "__main__":
    note_start()
    good = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    for n, line in enumerate(sys.stdin):
        if n >= good:
            print("warming up", file=sys.stderr)
            print("boom: cannot assign", file=sys.stderr, flush=True)
            sys.exit(3)
        sys.stdout.write(json.dumps(assign(json.loads(line))) + "\n")
        sys.stdout.flush()
