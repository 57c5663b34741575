"""A well-behaved exec: assignor: one round-robin Assignment line per input line."""

from _common import serve

if __name__ == "__main__":
    serve()
