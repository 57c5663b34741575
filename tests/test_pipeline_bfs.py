"""The Spark exploration engine against the in-process reference: equal counts, verdicts, traces.

Checkpoints: a run stopped after a level (an injected hook) and a process killed with SIGKILL in
the middle of writing a checkpoint both resume to the result of an uninterrupted run.
"""

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from rebalproof.errors import InputError
from rebalproof.pipeline.bfs import Checkpointing, explore_distributed
from rebalproof.pipeline.frontier import fibonacci_buckets
from rebalproof.pipeline.checkpoint import CheckpointStore
from rebalproof.pipeline.session import spark_session
from rebalproof.pipeline.space import explore_reference
from rebalproof.pipeline.toymodels import Chain, Counters

COUNTERS = Counters()  # 18**4 = 104,976 states, 28 levels: the equality test at scale
SMALL = Counters(modulus=10, target=20)  # 10,000 states, 20 levels: checkpoints and variants


@pytest.fixture(scope="session")
def spark():
    return spark_session(master="local[2]")


@pytest.fixture(scope="module")
def reference():
    return explore_reference(COUNTERS)


@pytest.fixture(scope="module")
def small():
    return explore_reference(SMALL)


class Stop(Exception):
    """Raised by a hook to stop a run, as a crash would."""


def test_reference_pins_the_toy_model(reference):
    assert reference.states == 18**4 == 104_976
    assert reference.transitions == 1_154_736
    assert reference.depth == 28 and reference.complete
    assert reference.trace("not-all-equal").actions == ("inc 0", "inc 1", "inc 2", "inc 3")
    assert reference.trace("sum-not-target").depth == 14


def test_spark_equals_reference_at_100k_states(spark, reference):
    result = explore_distributed(COUNTERS, spark=spark, partitions=4)
    assert result == reference  # counts per level, transitions, verdicts, the very same traces
    assert result.summary() == reference.summary()
    for name, trace in reference.violations:
        assert result.trace(name).actions == trace.actions and result.trace(name).states == trace.states


@pytest.mark.parametrize("partitions", [1, 7])
def test_result_does_not_depend_on_partitions(spark, small, partitions):
    assert explore_distributed(SMALL, spark=spark, partitions=partitions) == small


def test_depth_bound_is_inconclusive_not_complete(spark):
    expected = explore_reference(COUNTERS, max_depth=6)
    result = explore_distributed(COUNTERS, spark=spark, max_depth=6)
    assert result == expected and not result.complete and result.depth == 6
    assert [name for name, _ in result.violations] == ["not-all-equal"]
    # a bound at the very end of a space is complete: nothing lies beyond it
    chain = explore_distributed(Chain(length=5), spark=spark, max_depth=5)
    assert chain == explore_reference(Chain(length=5), max_depth=5) and chain.complete


def test_chain_one_state_per_level(spark):
    result = explore_distributed(Chain(length=20), spark=spark)
    assert result == explore_reference(Chain(length=20))
    assert result.levels == (1,) * 21 and result.trace("below-end").depth == 20


def test_fibonacci_buckets_are_even_where_low_bits_are_not():
    fps = np.arange(0, 4096 * 64, 64, dtype=np.int64)  # low 6 bits all zero
    sizes = np.bincount(fibonacci_buckets(fps, 4), minlength=4)
    assert sizes.min() > 900 and sizes.max() < 1150
    assert np.bincount(fps % 4, minlength=4).tolist() == [4096, 0, 0, 0]


def test_stop_after_a_level_then_resume(spark, small, tmp_path):
    directory = str(tmp_path / "ck")
    policy = Checkpointing(directory=directory, every_levels=5, every_seconds=None)
    seen = []

    def stop_at_12(report):
        seen.append((report.depth, report.checkpointed))
        if report.depth == 12:
            raise Stop

    with pytest.raises(Stop):
        explore_distributed(SMALL, spark=spark, checkpoint=policy, on_level=stop_at_12)
    assert seen[:6] == [(1, False), (2, False), (3, False), (4, False), (5, True), (6, False)]
    names = sorted(os.listdir(directory))
    assert "manifest-000010.json" in names and "frontier-000010" in names
    assert not any(n.startswith("_tmp-") for n in names)
    resumed = []
    result = explore_distributed(SMALL, spark=spark, checkpoint=policy, resume=directory, on_level=lambda r: resumed.append(r.depth))
    assert resumed[0] == 11  # went on from the checkpoint at level 10
    assert result == small


def test_resume_into_another_directory_and_without_checkpoints(spark, tmp_path):
    chain = Chain(length=30)
    first = str(tmp_path / "first")

    def stop_at_9(report):
        if report.depth == 9:
            raise Stop

    with pytest.raises(Stop):
        explore_distributed(chain, spark=spark, checkpoint=Checkpointing(directory=first, every_levels=4, every_seconds=None), on_level=stop_at_9)
    second = str(tmp_path / "second")
    stop_at_20 = lambda report: (_ for _ in ()).throw(Stop()) if report.depth == 20 else None  # noqa: E731
    with pytest.raises(Stop):
        explore_distributed(chain, spark=spark, resume=first, checkpoint=Checkpointing(directory=second, every_levels=4, every_seconds=None), on_level=stop_at_20)
    assert "manifest-000020.json" in os.listdir(second)
    assert explore_distributed(chain, spark=spark, resume=second) == explore_reference(chain)
    assert explore_distributed(chain, spark=spark, resume=first) == explore_reference(chain)


def test_resume_refuses_another_model_or_an_empty_directory(spark, tmp_path):
    directory = str(tmp_path / "ck")

    def stop_at_3(report):
        if report.depth == 3:
            raise Stop

    with pytest.raises(Stop):
        explore_distributed(Chain(length=10), spark=spark, checkpoint=Checkpointing(directory=directory, every_levels=2, every_seconds=None), on_level=stop_at_3)
    with pytest.raises(InputError, match="another model or bound"):
        explore_distributed(Chain(length=11), spark=spark, resume=directory)
    with pytest.raises(InputError, match="no checkpoint in"):
        explore_distributed(Chain(length=10), spark=spark, resume=str(tmp_path / "empty"))


def test_half_written_checkpoint_is_ignored_and_cleaned(spark, tmp_path):
    directory = str(tmp_path / "ck")
    chain = Chain(length=12)

    def fail_before_manifest(stage, level):
        if stage == "frontier" and level == 8:
            raise Stop

    with pytest.raises(Stop):
        explore_distributed(chain, spark=spark, checkpoint=Checkpointing(directory=directory, every_levels=4, every_seconds=None, on_stage=fail_before_manifest))
    assert {"links-000005-000008", "frontier-000008", "manifest-000004.json"} <= set(os.listdir(directory))
    store = CheckpointStore(spark, directory)
    assert store.load().level == 4
    assert sorted(os.listdir(directory)) == [".manifest-000004.json.crc", "frontier-000004", "links-000000-000004", "manifest-000004.json"]
    assert explore_distributed(chain, spark=spark, resume=directory) == explore_reference(chain)


KILLED_RUN = """
import os, signal, sys
from rebalproof.pipeline.bfs import Checkpointing, explore_distributed
from rebalproof.pipeline.session import spark_session
from rebalproof.pipeline.toymodels import Counters

def kill_mid_checkpoint(stage, level):
    if stage == "frontier" and level == 16:
        os.kill(os.getpid(), signal.SIGKILL)  # links and frontier of level 16 written, no manifest

spark = spark_session(master="local[2]")
explore_distributed(Counters(modulus=10, target=20), spark=spark, partitions=4,
    checkpoint=Checkpointing(directory=sys.argv[1], every_levels=4, every_seconds=None, on_stage=kill_mid_checkpoint))
print("not killed")
"""


def test_kill_9_in_the_middle_of_a_checkpoint_then_resume(spark, small, tmp_path):
    directory = tmp_path / "ck"
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_GATEWAY_PORT"}
    work = tmp_path / "cwd"
    work.mkdir()
    done = subprocess.run([sys.executable, "-c", KILLED_RUN, str(directory)], capture_output=True, text=True, env=env, cwd=work, timeout=600)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert "not killed" not in done.stdout
    assert done.stderr.strip() == ""  # a fresh process: Spark's start-up, jobs and Parquet writes print nothing
    assert os.listdir(work) == []  # no spark-warehouse, metastore_db or derby.log in the working directory
    left = set(os.listdir(directory))
    assert {"manifest-000012.json", "links-000013-000016", "frontier-000016"} <= left
    assert "manifest-000016.json" not in left
    result = explore_distributed(SMALL, spark=spark, resume=str(directory))
    assert result == small
