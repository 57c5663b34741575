"""Never answers. Modes (argv[1]):

- ``read`` (default): reads the input line, then blocks reading stdin for more;
- ``sleep``: reads the input line, then sleeps for an hour (ignoring SIGTERM);
- ``child``: starts a grandchild that sleeps for an hour, prints its pid on stderr, then
  blocks reading stdin; the grandchild must die with the process group.

Only the caller's timeout ends it.
"""

import signal
import subprocess
import sys
import time

if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "read"
    sys.stdin.readline()
    print(f"hang: got the input, mode {mode}", file=sys.stderr, flush=True)
    if mode == "sleep":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(3600)
    elif mode == "child":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        print(f"grandchild {child.pid}", file=sys.stderr, flush=True)
        sys.stdin.readline()
    else:
        sys.stdin.readline()
