"""Shared test set-up: the derandomized hypothesis profile for CI, and the repository root."""

import functools
import os
import re
import tempfile
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


def _scratch_in_memory(ram: Path = Path("/dev/shm")) -> None:
    """The tests' scratch files (``tmp_path``, :mod:`tempfile`, Spark's local directories) on a
    RAM disk where the machine has one.

    Measured on the 2-core CI machine: rewriting a file on its ext4 disk waits about a
    millisecond for the disk (a truncated file's blocks are flushed on close), so the fuzzing
    suite, which rewrites one file per case, waited half its time (test_fuzz_readers.py -n 2:
    35 s wall for 32 s of CPU on two cores; on /dev/shm 15 s). What the tests check is the same
    either way: the code under test writes through the same calls (atomic renames within one
    directory). Set here, at start-up, so that xdist's workers, the CLI subprocesses and Spark's
    JVM inherit it; an explicit ``TMPDIR`` is kept."""
    if "TMPDIR" in os.environ or not (ram.is_dir() and os.access(ram, os.W_OK)):
        return
    scratch = ram / f"rebalproof-tests-{os.getuid()}"
    scratch.mkdir(mode=0o700, exist_ok=True)
    os.environ["TMPDIR"] = str(scratch)
    os.environ.setdefault("SPARK_LOCAL_DIRS", str(scratch))
    tempfile.tempdir = None  # computed again from TMPDIR (pytest's capture asked before this ran)


_scratch_in_memory()


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


# -- running in parallel (make test: pytest -n 3 --dist loadgroup) -----------------------------
# Three test processes on the 2-core machine: the tests that run Spark in the test process wait
# a good part of their time (small Spark jobs, checkpoints, a killed run's restart), and the
# other two processes fill those waits with plain Python tests. The Spark tests are two units,
# each run by one process with its own Spark driver (a JVM, kept for the rest of the run:
# pipeline/session.py): test_pipeline_groupbfs.py ("spark-groupbfs") and every other Spark file
# ("spark"); both are handed out first. Measured with the groups of the last run: -n 2 with the
# Spark files spread over both processes, 213 s; -n 2 with one Spark unit, 205 s (its waits
# beside one Python process left the machine a third idle); -n 3 with the two units, 187 s at
# 1.9 cores busy. Tests that share fixed paths outside tmp_path run in one process too. Without
# -n nothing changes.
_SPARK = re.compile(r"spark_session|explore_spark|check_corpus_spark|--engine\W+spark|engine spark")
# test_readme.py's module fixture runs every README command once, in one process: the Spark
# ones (a checkpointed check and its resume) in the test process, so with the other Spark files.
_OWN_GROUP = {"test_examples.py": "examples", "test_readme.py": "spark", "test_pipeline_groupbfs.py": "spark-groupbfs"}
#: The longest units of work, longest first (seconds of one process, measured on a quiet machine):
#: they are handed out first, so that both processes end together instead of one waiting while
#: the other runs a long test that happened to come late in the collection (longest-first
#: scheduling). A unit is a group or one test, named by its group or a prefix of its id; the
#: rest keep collection order, after these.
_LONGEST_FIRST = (
    "spark-groupbfs",  # ~110 s with Python beside it
    "spark",  # ~95 s
    "tests/test_manifest.py::test_manifest_row",  # ~60 s in ~60 tests
    "tests/test_fuzz_readers.py",  # ~28 s
    "tests/test_group_capacities.py",  # ~24 s
    "tests/test_fast_core.py",  # ~14 s
    "tests/test_stable_exact.py",
    "tests/test_solver_engines.py",
    "tests/test_strategies_builtins.py",
    "tests/test_labels.py",
    "tests/test_properties_assignment.py",
    "tests/test_assignor_ha.py",
    "tests/test_mutants.py",
    "examples",
    # a headless browser (~4 s, mostly Chromium's start-up): last in collection order, it ran
    # alone at the end of the run while the other two processes had finished (the run's tail)
    "tests/test_traces_browser.py",
)


@functools.cache
def _file_group(path: str) -> str | None:
    """The group of the tests in ``path`` (relative to the repository), None when they have none."""
    name = Path(path).name
    if name in _OWN_GROUP:
        return _OWN_GROUP[name]
    return "spark" if _SPARK.search((ROOT / path).read_text(encoding="utf-8")) else None


def _unit(nodeid: str) -> str | None:
    """The group a test id belongs to (None: the test is a unit of its own).

    Decided from the id alone, in the controller: pytest 9 names an item by ``_id``, so
    pytest-xdist 3.8's ``--dist loadgroup`` (which appends ``@group`` to ``_nodeid`` in the
    workers) groups nothing there, and every group was spread over both processes."""
    if "@" in nodeid.rsplit("]", 1)[-1]:  # pytest 8: xdist's own suffix for an xdist_group mark
        nodeid = nodeid.rsplit("@", 1)[0]
    path = nodeid.partition("::")[0]
    return _file_group(path)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """Under ``--dist loadgroup``: xdist's scope scheduler with our units (:func:`_unit`) as scopes."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Units(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid) or nodeid

    return Units(config, log)


#: Spark tests that start Spark with the default master (``local[*]``) where the others ask for
#: ``local[2]``, in the order they run, last in their group: the README's commands (``local[2]``,
#: then the default), then a test that uses only the default. So the process's session restarts
#: once, not at each change of master: a restart (pipeline/session.py stops the session and
#: starts one with the other master) took ~1.2 CPU-s and ~3.7 s, new Python workers importing
#: everything again; in collection order the "spark" group restarted three times.
_DEFAULT_MASTER_LAST = ("tests/test_readme.py", "tests/test_oracle_corpus_spark.py::test_spark_rejects_what_the_local_reader_rejects")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """In the workers (xdist sets ``loadgroup`` there, ``dist`` to "no"), the collection in
    :data:`_LONGEST_FIRST` order: the scheduler hands units out in collection order. Within a
    unit, :data:`_DEFAULT_MASTER_LAST` last."""
    if getattr(config.option, "loadgroup", False):
        items.sort(key=lambda item: (_rank(item.nodeid), _master_rank(item.nodeid)))  # stable: else collection order


def _master_rank(nodeid: str) -> int:
    for rank, prefix in enumerate(_DEFAULT_MASTER_LAST, start=1):
        if nodeid.startswith(prefix):
            return rank
    return 0


def _rank(nodeid: str) -> int:
    unit = _unit(nodeid)
    for rank, name in enumerate(_LONGEST_FIRST):
        if unit == name or (unit is None and nodeid.startswith(name)):
            return rank
    return len(_LONGEST_FIRST)


def pytest_configure(config):
    """Under --dist loadgroup, units go out in the order :data:`_LONGEST_FIRST` gives them, not
    xdist's default (most tests first, which puts a long test alone late: one process idles)."""
    if getattr(config.option, "dist", "no") == "loadgroup":
        config.option.loadscopereorder = False
