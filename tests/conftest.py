"""Shared test set-up: the derandomized hypothesis profile for CI, and the repository root."""

import os
from pathlib import Path

import pytest
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



@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """The fuzzing suite's counts ride on its tests' reports (so they reach the summary under xdist too)."""
    outcome = yield
    counts = getattr(item.module, "FUZZ_COUNTS", None)
    if call.when == "call" and counts:
        outcome.get_result().user_properties.append(("fuzz_counts", {k: dict(v) for k, v in counts.items()}))


def pytest_terminal_summary(terminalreporter):
    """How many cases the fuzzing suite (tests/test_fuzz_readers.py) ran per reader, with their outcomes."""
    latest = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            for name, value in getattr(report, "user_properties", ()):
                if name == "fuzz_counts":
                    for reader, outcome in value.items():
                        if outcome.get("cases", 0) >= latest.get(reader, {}).get("cases", 0):
                            latest[reader] = outcome
    for reader, outcome in latest.items():
        detail = ", ".join(f"{k} {v}" for k, v in sorted(outcome.items()) if k != "cases")
        terminalreporter.write_line(f"fuzzing: {reader}: {outcome['cases']} cases ({detail})")
