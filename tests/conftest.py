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


# -- running in parallel (make test: pytest -n 2 --dist loadgroup) -----------------------------
# Each test process starts its own Spark driver (a JVM) the first time a test needs Spark and keeps
# it for the rest of the run (pipeline/session.py); with two processes that is two JVMs at most,
# however the tests are spread. The tests of one Spark file stay together (their module and
# session fixtures -- a session, a reference exploration -- are built once), but the files are
# spread over both processes like every other test, so neither waits while the other runs all of
# Spark. Tests that share fixed paths outside tmp_path run in one process too. Without -n nothing
# changes.
_SPARK = re.compile(r"spark_session|explore_spark|check_corpus_spark|--engine\W+spark|engine spark")
# test_readme.py's module fixture runs every README command (make verify's suite, a Spark resume
# among them): in one process, it runs once; spread over two, each ran all of it.
_OWN_GROUP = {"test_examples.py": "examples", "test_readme.py": "readme"}
_ALONE = {"test_equal_at_100k_states_with_the_default_hybrid": "spark-100k"}  # the heaviest test: in its own group
#: The longest units of work, longest first (seconds of one process, measured on a quiet machine):
#: they are handed out first, so that both processes end together instead of one waiting while
#: the other runs a long test that happened to come late in the collection (longest-first
#: scheduling). A unit is an xdist group or one test, named by its group or a prefix of its id;
#: the rest keep collection order, after these.
_LONGEST_FIRST = (
    "spark-test_pipeline_groupbfs",  # ~90 s
    "spark-100k",  # ~40 s
    "spark-test_pipeline_bfs",  # ~40 s
    "readme",  # ~30 s
    "tests/test_manifest.py::test_manifest_row",  # ~80 s in ~60 tests
    "tests/test_fuzz_readers.py",  # ~35 s
    "tests/test_group_capacities.py",  # ~30 s
    "spark-test_check_engine_spark",  # ~10 s
    "tests/test_stable_exact.py",  # ~18 s
    "tests/test_solver_engines.py",
    "tests/test_strategies_builtins.py",
    "tests/test_labels.py",
    "tests/test_properties_assignment.py",
    "tests/test_assignor_ha.py",
    "tests/test_mutants.py",
    "examples",
)


def _group(path: Path) -> str | None:
    if path.name in _OWN_GROUP:
        return _OWN_GROUP[path.name]
    return f"spark-{path.stem}" if _SPARK.search(path.read_text(encoding="utf-8")) else None


@functools.cache
def _file_group(path: str) -> str | None:
    return _group(ROOT / path)


def _unit(nodeid: str) -> str | None:
    """The group a test id belongs to (None: the test is a unit of its own).

    Decided from the id alone, in the controller: pytest 9 names an item by ``_id``, so
    pytest-xdist 3.8's ``--dist loadgroup`` (which appends ``@group`` to ``_nodeid`` in the
    workers) groups nothing there, and every group was spread over both processes."""
    if "@" in nodeid.rsplit("]", 1)[-1]:  # pytest 8: xdist's own suffix for an xdist_group mark
        nodeid = nodeid.rsplit("@", 1)[0]
    path, _, rest = nodeid.partition("::")
    return _ALONE.get(rest.rsplit("::", 1)[-1].split("[", 1)[0]) or _file_group(path)


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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """In the workers (xdist sets ``loadgroup`` there, ``dist`` to "no"), the collection in
    :data:`_LONGEST_FIRST` order: the scheduler hands units out in collection order."""
    if getattr(config.option, "loadgroup", False):
        items.sort(key=lambda item: _rank(item.nodeid))  # stable: within a rank, collection order


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
