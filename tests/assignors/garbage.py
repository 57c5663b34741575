"""Answers every input with something that is not a valid Assignment for it. Modes (argv[1]):

- ``text`` (default): a line that is not JSON;
- ``list``: JSON, but a list, not an Assignment object;
- ``unknown-task``: an Assignment naming a task the input does not have;
- ``missing-member``: an Assignment leaving out an input member;
- ``empty``: an empty line.
"""

import json
import sys

from _common import assign, note_start

if __name__ == "__main__":
    note_start()
    mode = sys.argv[1] if len(sys.argv) > 1 else "text"
    for line in sys.stdin:
        obj = json.loads(line)
        answer = assign(obj)
        if mode == "text":
            out = "hello, this is not JSON"
        elif mode == "list":
            out = json.dumps([1, 2, 3])
        elif mode == "unknown-task":
            first = obj["members"][0]["id"]
            answer["assignment"][first]["active"].append("9_9")
            out = json.dumps(answer)
        elif mode == "missing-member":
            answer["assignment"].pop(obj["members"][-1]["id"])
            out = json.dumps(answer)
        else:
            out = ""
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
