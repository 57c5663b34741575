"""Sleeps argv[1] seconds before reading anything (a slow JVM-like start), then answers correctly."""

import sys
import time

from _common import serve

if __name__ == "__main__":
    time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0.5)
    serve()
