"""Shared test set-up: the derandomized hypothesis profile for CI, and the repository root."""

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parent.parent


def pytest_terminal_summary(terminalreporter):
    """How many cases the fuzzing suite (tests/test_fuzz_readers.py) ran per reader, with their outcomes."""
    import sys

    for module in list(sys.modules.values()):
        counts = getattr(module, "FUZZ_COUNTS", None)
        if isinstance(counts, dict) and counts:
            for reader, outcome in counts.items():
                detail = ", ".join(f"{k} {v}" for k, v in sorted(outcome.items()) if k != "cases")
                terminalreporter.write_line(f"fuzzing: {reader}: {outcome['cases']} cases ({detail})")
            break
