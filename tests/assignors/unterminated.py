"""Writes an answer without ending its line (red team 10). Modes (argv[1]):

- ``wait`` (default): the whole answer, no newline, then blocks reading stdin (a timeout);
- ``exit``: the first 20 bytes of the answer, then exits 0 (a crash);
- ``stack``: a Node.js-style crash: the error line, then ten stack frames, on stderr, exit 1.
"""

import json
import sys

from _common import assign

if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "wait"
    answer = json.dumps(assign(json.loads(sys.stdin.readline())))
    if mode == "stack":
        print("TypeError: Cannot read properties of undefined (reading 'slice')", file=sys.stderr)
        for frame in range(10):
            print(f"    at frame{frame} (/app/assignor.js:{frame + 10}:5)", file=sys.stderr)
        sys.stderr.flush()
        sys.exit(1)
    sys.stdout.write(answer if mode == "wait" else answer[:20])
    sys.stdout.flush()
    if mode == "wait":
        sys.stdin.readline()
