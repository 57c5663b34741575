"""Answers every input with its Assignment written twice: two lines for one input."""

import json
import sys

from _common import assign, note_start

if __name__ == "__main__":
    note_start()
    for line in sys.stdin:
        text = json.dumps(assign(json.loads(line)))
        sys.stdout.write(text + "\n" + text + "\n")
        sys.stdout.flush()
