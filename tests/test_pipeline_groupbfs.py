"""The Spark engine on the group model: the local explorer's very result, array for array.

Each test runs :func:`rebalproof.model.explorer.explore` and
:func:`rebalproof.pipeline.groupbfs.explore_spark` on the same model with a fresh
:class:`RunMonitor` each, then compares the state graph (numbering, parents, actions, depths,
edges, fingerprints, bound), the monitor's records and :func:`evaluate`'s verdicts and
discoveries. The last level sizes are not pinned here: the group model's own tests pin them.
"""

import re
import sys
from dataclasses import replace
from types import SimpleNamespace

import pytest
from pyspark import cloudpickle

from rebalproof.errors import AssignorError, InputError
from rebalproof.model.assignors import builtin
from rebalproof.model.explorer import Limits, explore
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_model import GroupModel
from rebalproof.model.group_protocol import protocol
from rebalproof.model.toy_assignors import NaiveLearner
from rebalproof.pipeline.bfs import Checkpointing
from rebalproof.pipeline.groupbfs import explore_spark
from rebalproof.pipeline.session import spark_session
from rebalproof.properties.run import RunContext, RunMonitor, evaluate

# assignors defined here reach Spark's workers by value (this module is not importable there)
cloudpickle.register_pickle_by_value(sys.modules[__name__])

GRAPH = ("parent", "via", "depth", "edge_src", "edge_dst", "edge_act", "first_edge", "fingerprints")
OUTCOME = ("actions", "complete", "bound", "unexpanded", "errors", "init")
RECORDS = ("flags", "layout_id", "unprocessed", "edge_weight", "edge_moved", "edge_unforced")


@pytest.fixture(scope="session")
def spark():
    return spark_session(master="local[2]")


def check(proto, assignor, *, rules=None, name=None, **bounds):
    """A model and its run context: ``assignor`` is a built-in name or a callable."""
    if isinstance(assignor, str):
        info = builtin(assignor)
        name, rules, assignor = assignor, info.rules, info.make()
    bounds = Bounds(**bounds)
    proto = protocol(proto) if isinstance(proto, str) else proto
    model = GroupModel(protocol=proto, bounds=bounds, assignor=assignor, assignor_name=name)
    return model, RunContext(protocol=proto, rules=rules, bounds=bounds, assignor=name)


def run_both(spark, model, ctx, *, stop_early=False, evaluate_both=True, **kwargs):
    limits = kwargs.pop("limits", Limits())
    local_monitor = RunMonitor(ctx, model, stop_early=stop_early)
    local = explore(model, monitor=local_monitor, limits=limits)
    spark_monitor = RunMonitor(ctx, model, stop_early=stop_early)
    distributed = explore_spark(model, monitor=spark_monitor, limits=limits, spark=spark, **kwargs)
    assert_same(local, distributed, local_monitor, spark_monitor)
    if evaluate_both:
        assert verdicts(ctx, local, local_monitor) == verdicts(ctx, distributed, spark_monitor)
    return local, distributed


def assert_same(local, distributed, local_monitor, spark_monitor):
    assert distributed.states == local.states
    for name in GRAPH + OUTCOME:
        assert getattr(distributed, name) == getattr(local, name), name
    for name in RECORDS:
        assert getattr(spark_monitor, name) == getattr(local_monitor, name), f"monitor.{name}"
    assert (spark_monitor.judge is None) == (local_monitor.judge is None)
    if local_monitor.judge is not None:  # every answer judged: the same views, the same verdicts
        assert spark_monitor.judge.views == local_monitor.judge.views
        assert spark_monitor.judge.requested == local_monitor.judge.requested  # the requested rebalances' views
    assert {k: plain(d) for k, d in spark_monitor.discoveries.items()} == {k: plain(d) for k, d in local_monitor.discoveries.items()}
    assert [(i, plain_error(e)) for i, e in spark_monitor.errors] == [(i, plain_error(e)) for i, e in local_monitor.errors]


def plain_error(error):
    """An AssignorError as a value (exceptions compare by identity)."""
    return (str(error), error.kind, error.assignor, error.input_json)


def plain(discovery):
    if discovery is None or discovery.error is None:
        return discovery
    return replace(discovery, error=plain_error(discovery.error))


def verdicts(ctx, exploration, monitor):
    return [(r.verdict.to_json(), plain(r.discovery)) for r in evaluate(ctx, exploration, monitor)]


def test_equal_with_the_default_hybrid_levels_driver_spark_driver(spark):
    """learner + learner, 3 instances (2 at the start), 2 events: 20,289 states in 32 levels when
    written, the middle ten of at least 1,000 states. The default hybrid expands the small first
    levels in the driver, hands the frontier to Spark (4 partitions), keeps it there from level to
    level (evening it out by a shuffle when it grows skewed), and takes it back for the small last
    levels; every array, record and verdict (traces and
    liveness included) is the local run's.

    It replaces a comparison at 118,253 states (cooperative + ha, 4 instances) without verdicts
    that was a third of the suite's time: the same paths at a sixth of the states, and the
    verdicts compared too. The engines' identity at a million states is what bench/spark.py
    checks (identical reports) on every run."""
    model, ctx = check("learner", "learner", instances=3, initial=2, events=2)
    local, distributed = run_both(spark, model, ctx)
    assert local.states >= 20_000 and local.complete
    levels = distributed.spark_stats["levels"]
    assert distributed.spark_stats["partitions"] > 1
    assert re.fullmatch(r"d+s{2,}d+", levels), levels  # driver, then Spark level after level, then driver
    assert distributed.spark_stats["evened"] > 0  # a skewed Spark frontier was shuffled even, and nothing changed


def test_equal_at_100k_states_with_the_default_hybrid(spark):
    """cooperative + ha, 4 instances (3 at the start), 2 events: 118,253 states when written.

    The engines agree exactly at the scale the Spark engine is for (issue 7: "at least 100,000
    distinct states"): every array and monitor record; the verdicts are compared on the smaller
    models above and below."""
    model, ctx = check("cooperative", "ha", instances=4, initial=3, events=2)
    local, distributed = run_both(spark, model, ctx, evaluate_both=False)
    assert local.states >= 100_000 and local.complete
    assert "s" in distributed.spark_stats["levels"] and "d" in distributed.spark_stats["levels"]


@pytest.mark.parametrize(
    "proto, assignor, bounds",
    [
        ("eager", "sticky", dict(instances=3, initial=2, events=2)),
        ("cooperative", "ha", dict(instances=3, initial=2, events=2)),
        ("learner", "learner", dict(instances=3, initial=2, events=2, standbys=0)),
        # stream threads (issue 14): the leader's views and the per-thread balance flags agree
        ("cooperative", "ha", dict(instances=3, initial=2, events=1, capacities=(1, 2))),
    ],
)
def test_equal_verdicts_with_every_level_on_spark(spark, proto, assignor, bounds):
    run = every_level_on_spark(spark, proto, assignor, bounds)
    assert_same(run.local, run.distributed, run.local_monitor, run.spark_monitor)
    assert verdicts(run.ctx, run.local, run.local_monitor) == verdicts(run.ctx, run.distributed, run.spark_monitor)
    assert run.local.complete


#: (protocol, assignor, bounds) -> the runs of :func:`every_level_on_spark`, for the tests that read them
_EVERY_LEVEL_ON_SPARK: dict = {}


def every_level_on_spark(spark, proto, assignor, bounds):
    """The local run and the Spark run (every level on Spark, 3 partitions) of one check, each
    with a model of its own (so each model's chooser counts its own run's assignor calls), made
    once for the tests that check different things of the same two runs."""
    key = (proto, assignor, tuple(sorted(bounds.items())))
    if key not in _EVERY_LEVEL_ON_SPARK:
        local_model, ctx = check(proto, assignor, **bounds)
        local_monitor = RunMonitor(ctx, local_model)
        local = explore(local_model, monitor=local_monitor)
        spark_model, _ = check(proto, assignor, **bounds)
        spark_monitor = RunMonitor(ctx, spark_model)
        distributed = explore_spark(spark_model, monitor=spark_monitor, spark=spark, local_below=0, partitions=3)
        _EVERY_LEVEL_ON_SPARK[key] = SimpleNamespace(
            ctx=ctx, local_model=local_model, local=local, local_monitor=local_monitor,
            spark_model=spark_model, distributed=distributed, spark_monitor=spark_monitor)
    return _EVERY_LEVEL_ON_SPARK[key]


def owner_blind(view):
    """Round-robin over the sorted tasks, owners and lags ignored: breaks caught-up-active."""
    from rebalproof.model.assignment import Assignment

    members = view.member_ids
    roles = {m: {"active": []} for m in members}
    for i, t in enumerate(view.task_ids):
        roles[members[i % len(members)]]["active"].append(t)
    return Assignment.build(roles)


@pytest.mark.parametrize("stop_early", [False, True], ids=["complete", "stop-early"])
def test_every_answer_judged_alike_on_spark(spark, stop_early):
    """The per-rebalance verdicts: the same violating and judged views, the same first trace."""
    model, ctx = check("cooperative", owner_blind, rules="ha", name="owner-blind", instances=3, initial=2, events=2)
    run_both(spark, model, ctx, stop_early=stop_early, local_below=0, partitions=3)
    monitor = RunMonitor(ctx, model, stop_early=stop_early)
    results = {v["property"]: v for v, _ in verdicts(ctx, explore(model, monitor=monitor), monitor)}
    # stopping early, the first violation found ends the run: a rebalance requested at the warm
    # start already shows the owner-blind deal (GroupModel.requested_probes), before any join
    name = "caught-up-active" if not stop_early else next(n for n, v in results.items() if v["status"] == "violated")
    assert results[name]["status"] == "violated"
    assert results[name]["measure"]["violating_views"] > 0


def test_liveness_counterexample_is_the_same_lasso(spark):
    """Seed 001 v1.0's warning: learners to any idle instance shuffle endlessly."""
    model, ctx = check("learner", NaiveLearner(learners_to="any"), rules="learner", name="naive",
                       instances=3, initial=2, events=1, standbys=0, subtopologies=1, partitions=1)
    local_monitor = RunMonitor(ctx, model)
    local = explore(model, monitor=local_monitor)
    spark_monitor = RunMonitor(ctx, model)
    distributed = explore_spark(model, monitor=spark_monitor, spark=spark, local_below=0)
    assert_same(local, distributed, local_monitor, spark_monitor)
    expected = verdicts(ctx, local, local_monitor)
    assert verdicts(ctx, distributed, spark_monitor) == expected
    statuses = {v["property"]: v["status"] for v, _ in expected}
    assert statuses["no-shuffle-cycle"] == "violated"


@pytest.mark.parametrize(
    "limits",
    [Limits(max_states=3000), Limits(max_states=3001), Limits(max_depth=6), Limits(max_depth=0)],
    ids=["max_states", "max_states+1", "depth", "depth0"],
)
def test_bounds_cut_where_the_local_explorer_cuts(spark, limits):
    model, ctx = check("cooperative", "ha", instances=3, initial=2, events=2)
    local, _ = run_both(spark, model, ctx, local_below=0, limits=limits, partition_visited_at=1000)
    assert not local.complete and local.bound


def test_stop_at_the_first_violation_mid_level(spark):
    """A broken protocol (hand-over before revocation) breaks single-owner; stop_early stops there."""
    broken = protocol("cooperative", early_handover=True)
    model, ctx = check(broken, "ha", instances=3, initial=2, events=1)
    local, distributed = run_both(spark, model, ctx, stop_early=True, local_below=0, partition_visited_at=0)
    assert distributed.spark_stats["visited_partitioned_at"] == 0
    assert local.bound == "stopped at the first violation"


class CrashesOnThree:
    """Answers like sticky, but fails (a finding) whenever three members join."""

    def __init__(self):
        self.inner = builtin("sticky").make()

    def __call__(self, view):
        if len(view.members) == 3:
            raise AssignorError("three is a crowd", kind="crash", assignor="crashy", input_json={"members": 3})
        return self.inner(view)


def test_assignor_failures_are_findings_in_both(spark):
    model, ctx = check("cooperative", CrashesOnThree(), rules="sticky", name="crashy", instances=3, initial=2, events=2)
    local, distributed = run_both(spark, model, ctx, local_below=0)
    assert local.errors > 0
    assert distributed.errors == local.errors


def test_an_unpicklable_assignor_is_refused_with_advice(spark):
    import threading

    lock = threading.Lock()

    def holds_a_lock(view):
        with lock:
            return builtin("sticky").make()(view)

    model, ctx = check("cooperative", holds_a_lock, rules="sticky", name="locked", instances=2, initial=1, events=1)
    with pytest.raises(InputError, match="local engine"):
        explore_spark(model, monitor=RunMonitor(ctx, model), spark=spark)


class Stop(Exception):
    pass


def test_checkpoint_stop_resume_equals_uninterrupted(spark, tmp_path):
    model, ctx = check("cooperative", "ha", instances=3, initial=2, events=2)
    local_monitor = RunMonitor(ctx, model)
    local = explore(model, monitor=local_monitor)
    directory = str(tmp_path / "ck")
    # every 6 levels of 27: saves at 6 and 12 before the stop at 14, at 18 and 24 after the resume
    # (every 4 wrote two more checkpoints, ~0.5 CPU-s each, for the same stops and resumes)
    policy = Checkpointing(directory=directory, every_levels=6, every_seconds=None)

    def stop_at_14(states, depth, queued, seconds):
        if depth == 14:
            raise Stop

    with pytest.raises(Stop):
        explore_spark(model, monitor=RunMonitor(ctx, model), spark=spark, local_below=0, checkpoint=policy, progress=stop_at_14)
    monitor = RunMonitor(ctx, model)  # the resumed run moves the visited set it loaded to Spark
    resumed = explore_spark(model, monitor=monitor, spark=spark, local_below=0, checkpoint=policy, resume=directory,
                            partition_visited_at=0)
    assert resumed.spark_stats["visited_partitioned_at"] == 12  # the newest checkpoint before the stop at 14
    assert_same(local, resumed, local_monitor, monitor)
    assert verdicts(ctx, resumed, monitor) == verdicts(ctx, local, local_monitor)

    # a run killed while writing its checkpoint at level 12 resumes from level 6
    again = str(tmp_path / "again")

    def fail_before_manifest(stage, level):
        if stage == "frontier" and level == 12:
            raise Stop

    with pytest.raises(Stop):
        explore_spark(model, monitor=RunMonitor(ctx, model), spark=spark, local_below=0,
                      checkpoint=Checkpointing(directory=again, every_levels=6, every_seconds=None, on_stage=fail_before_manifest))
    monitor = RunMonitor(ctx, model)
    resumed = explore_spark(model, monitor=monitor, spark=spark, resume=again)
    assert_same(local, resumed, local_monitor, monitor)
    with pytest.raises(InputError, match="another check"):
        explore_spark(model, monitor=RunMonitor(ctx, model), spark=spark, resume=again, limits=Limits(max_depth=3))


def test_spark_explorer_is_a_drop_in_for_explore(spark, tmp_path):
    from rebalproof.pipeline.groupbfs import spark_explorer

    model, ctx = check("cooperative", "ha", instances=3, initial=2, events=1)
    local_monitor = RunMonitor(ctx, model)
    local = explore(model, symmetry=False, limits=Limits(), monitor=local_monitor, progress=None)
    monitor = RunMonitor(ctx, model)
    seen = []
    # every 9 of its 18 levels: two checkpoints (every 3 wrote six, ~0.5 CPU-s each, for the same check)
    explore_on_spark = spark_explorer(spark=spark, local_below=0, checkpoint_dir=str(tmp_path / "ck"), checkpoint_every_levels=9)
    distributed = explore_on_spark(model, symmetry=False, limits=Limits(), monitor=monitor, progress=lambda *a: seen.append(a))
    assert_same(local, distributed, local_monitor, monitor)
    assert seen and seen[-1][0] == local.states
    assert any(p.name.startswith("manifest-") for p in (tmp_path / "ck").iterdir())


@pytest.mark.parametrize("local_below, partition_visited_at", [(0, 500), (1000, 10**9)],
                         ids=["every-level-on-spark-partitioned", "hybrid"])
def test_equal_with_partial_order_reduction(spark, local_below, partition_visited_at):
    """Both engines call the same ample-set function with their level's visited set (depth <= d):
    the same reduced graph, the same reduced expansions, the same verdicts; also once the driver's
    visited set has moved to Spark (the workers keep a whole copy of the fingerprints for is_old)."""
    model, ctx = check("eager", "sticky", instances=3, initial=2, events=2, partitions=3)
    local_monitor, spark_monitor = RunMonitor(ctx, model), RunMonitor(ctx, model)
    local = explore(model, monitor=local_monitor, por=True)
    distributed = explore_spark(model, monitor=spark_monitor, spark=spark, local_below=local_below, partitions=3, por=True,
                                partition_visited_at=partition_visited_at)
    assert_same(local, distributed, local_monitor, spark_monitor)
    assert verdicts(ctx, local, local_monitor) == verdicts(ctx, distributed, spark_monitor)
    assert distributed.por and distributed.reduced == local.reduced > 0
    assert local.states < explore(model).states


def test_a_reduced_run_resumes_to_the_same_reduced_result(spark, tmp_path):
    """POR through a checkpoint: the resumed run keeps the ample expansions counted before it."""
    model, ctx = check("eager", "sticky", instances=3, initial=2, events=2, partitions=3)
    local_monitor = RunMonitor(ctx, model)
    local = explore(model, monitor=local_monitor, por=True)
    policy = Checkpointing(directory=str(tmp_path / "ck"), every_levels=5, every_seconds=None)

    def stop_at_12(states, depth, queued, seconds):
        if depth == 12:
            raise Stop

    with pytest.raises(Stop):
        explore_spark(model, monitor=RunMonitor(ctx, model), spark=spark, local_below=50, checkpoint=policy,
                      progress=stop_at_12, por=True)
    monitor = RunMonitor(ctx, model)
    resumed = explore_spark(model, monitor=monitor, spark=spark, local_below=50, checkpoint=policy,
                            resume=str(tmp_path / "ck"), por=True)
    assert_same(local, resumed, local_monitor, monitor)
    assert resumed.reduced == local.reduced > 0
    with pytest.raises(InputError, match="another check"):  # a checkpoint of a reduced run is not one of a full run
        explore_spark(model, monitor=RunMonitor(ctx, model), spark=spark, resume=str(tmp_path / "ck"))


def test_the_assignor_calls_of_spark_workers_are_counted(spark):
    """Each worker keeps its own memo: a Spark run asks the assignor at least as often as a local
    one, and looks up exactly as many views (calls + memo hits), all counted on the model's chooser
    (the two runs test_equal_verdicts_with_every_level_on_spark[learner-learner-bounds2] compares)."""
    run = every_level_on_spark(spark, "learner", "learner", dict(instances=3, initial=2, events=2, standbys=0))
    assert run.distributed.spark_stats["spark_levels"] > 1
    local, remote = run.local_model._chooser, run.spark_model._chooser
    assert remote.calls >= local.calls > 0
    assert remote.calls + remote.hits == local.calls + local.hits


def test_equal_with_the_visited_set_partitioned_on_spark(spark):
    """cooperative + ha, 3 instances (2 at the start), 2 events: from the level that starts with
    1,000 states visited, the visited set lives on Spark by fingerprint hash, the driver keeps none
    of it, the workers drop only what their copy of the first levels proves visited and every
    later level runs on Spark; every array, record and verdict is the local run's."""
    model, ctx = check("cooperative", "ha", instances=3, initial=2, events=2)
    local, distributed = run_both(spark, model, ctx, local_below=300, partitions=3, partition_visited_at=1000)
    assert local.complete and local.states > 3000
    stats = distributed.spark_stats
    at = stats["visited_partitioned_at"]
    assert at is not None and sum(1 for d in local.depth if d <= at) >= 1000 and stats["levels"][at] == "s"
    assert re.fullmatch(r"d+s+", stats["levels"])
    assert stats["visited_jobs"] == len(stats["levels"]) - at  # one job a level from there on


def test_the_partitioned_visited_set_answers_as_the_driver_one(spark):
    """Random fingerprints (low bits alike, negatives) added level by level: both kinds resolve alike."""
    import numpy as np

    from rebalproof.pipeline.visited import DriverVisited, PartitionedVisited

    rng = np.random.default_rng(7)
    fps = np.unique(rng.integers(-2**62, 2**62, size=3000) * 8)
    rng.shuffle(fps)
    driver = DriverVisited(fps[:500], np.arange(500))
    partitioned = PartitionedVisited(spark.sparkContext, driver, 4)
    try:
        for start in (500, 1500, 2500):
            queries = np.unique(np.concatenate([fps[start - 300:start + 200], rng.integers(-2**62, 2**62, size=50)]))
            assert np.array_equal(partitioned.resolve(queries), driver.resolve(queries))
            new = np.arange(start, min(start + 1000, len(fps)))
            driver.add(fps[new], new)
            partitioned.add(fps[new], new)
        assert np.array_equal(partitioned.resolve(np.sort(fps)), driver.resolve(np.sort(fps)))
        assert len(partitioned) == len(driver) == len(fps) and partitioned.driver_bytes == 0
    finally:
        partitioned.release()


def test_candidate_states_travel_packed_and_come_back_equal():
    """pack_states/unpack_states: the model's packer when it has one (every state equal, the
    winners alone when picked), plain pickling otherwise."""
    from rebalproof.pipeline.frontier import pack_states, unpack_states

    model, _ = check("learner", "learner", instances=3, initial=2, events=1)
    states = list(model.init_states())
    for _ in range(3):  # two levels' successors of the first state, members repeated across states
        states += [s for _, s in model.expand(states[-1])]
    blob = pack_states(model, states)
    assert unpack_states(model, blob) == states
    assert unpack_states(model, blob, [len(states) - 1, 0]) == [states[-1], states[0]]

    class Unpacked:
        pass

    assert unpack_states(Unpacked(), pack_states(Unpacked(), states), [1]) == [states[1]]


def test_behind_probes_are_judged_alike_on_spark(spark):
    """The readings that spread behind copies apart are judged beside each state's first
    rebalance edge, not walked (model/lag_readings.py): a Spark bucket ships their verdicts
    with that edge, so every level on Spark judges the views the local run judges, and red
    team 8's furthest-behind bug breaks caught-up-active on both."""
    model, ctx, local, monitor = behind_probes_on_spark(spark, "red8_ha", "b_behind_worst")
    (result,) = [r for r in evaluate(ctx, local, monitor) if r.property.name == "caught-up-active"]
    assert result.verdict.status.name == "VIOLATED" and result.discovery.action.lags in ("behind-fewer-closer", "behind-more-closer")
    assert model.behind_summary() > 0


def test_an_assignor_failing_on_a_behind_probe_fails_alike_on_spark(spark):
    """A Spark bucket sends a failure on a behind probe as it sends a failed expansion: the
    same errors and the same finding (its probe's view) as the local run."""
    _, _, _, monitor = behind_probes_on_spark(spark, "behind_spread_crash", "assign")
    assert monitor.errors and monitor.discoveries["assignor-answers"].action.lags is not None


def behind_probes_on_spark(spark, module: str, function: str):
    """``py:tests.assignors.<module>:<function>`` at ``--standbys 0`` with boundary lags, where
    behind probes arise: run locally and with every level on Spark (:func:`run_both` compares
    them), then once more locally for a monitor to read. (model, ctx, local run, its monitor)."""
    import importlib

    from rebalproof.model.assignors.spec import resolve

    cloudpickle.register_pickle_by_value(importlib.import_module(f"tests.assignors.{module}"))
    with resolve(f"py:tests.assignors.{module}:{function}") as assignor:
        model, ctx = check("cooperative", assignor, rules="ha", name=function, standbys=0, boundary_lags=True)
        local, _ = run_both(spark, model, ctx, local_below=0, partitions=3)
        monitor = RunMonitor(ctx, model)
        explore(model, monitor=monitor)
    return model, ctx, local, monitor


def test_requested_rebalances_are_judged_alike_on_spark(spark):
    """A rebalance requested in a quiescent group is judged at the state's expansion, not walked
    (GroupModel.requested_probes): a Spark bucket ships its verdicts and first discoveries with the
    position it expanded, so every level on Spark judges the views the local run judges, and the
    balanced layout dealt again is a fixpoint violation on both."""
    model, ctx, local, monitor = requested_on_spark(spark, "red10_sticky", "antisticky")
    (result,) = [r for r in evaluate(ctx, local, monitor) if r.property.name == "fixpoint"]
    assert result.verdict.status.name == "VIOLATED" and result.discovery.action.requested


def test_an_assignor_failing_on_a_requested_rebalance_fails_alike_on_spark(spark):
    _, _, _, monitor = requested_on_spark(spark, "requested_crash", "assign", events=1)
    assert monitor.errors and monitor.discoveries["assignor-answers"].action.requested


def requested_on_spark(spark, module: str, function: str, **bounds):
    """``py:tests.assignors.<module>:<function>`` under the sticky rules, run locally and with every
    level on Spark (:func:`run_both` compares them), then once more locally for a monitor to read."""
    import importlib

    from rebalproof.model.assignors.spec import resolve

    for name in ("red10_sticky", module):
        cloudpickle.register_pickle_by_value(importlib.import_module(f"tests.assignors.{name}"))
    with resolve(f"py:tests.assignors.{module}:{function}") as assignor:
        model, ctx = check("cooperative", assignor, rules="sticky", name=function, **bounds)
        local, _ = run_both(spark, model, ctx, local_below=0, partitions=3)
        monitor = RunMonitor(ctx, model)
        explore(model, monitor=monitor)
    return model, ctx, local, monitor
