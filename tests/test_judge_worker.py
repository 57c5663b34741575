"""The per-rebalance judge on a forked worker gives the in-process judge's results exactly
(:mod:`rebalproof.properties.run_judge_worker`): every verdict, message, measure and first
discovery (state and action) of every property, for correct and deliberately broken assignors;
and where the worker cannot run, the pairs are judged in-process with the same results."""

from __future__ import annotations

import pytest

from broken_assignors import BROKEN, reference
from rebalproof.model.assignors.spec import resolve
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_protocol import protocol
from rebalproof.properties import run_judge_worker
from rebalproof.properties.run_check import check_model


def _report(result) -> list:
    """Everything a check reports per property, the first discovery included."""
    out = []
    for r in result.results:
        d = r.discovery
        where = None if d is None else (d.kind, d.state, d.action, d.message, d.path)
        out.append((r.property.name, r.verdict.status, r.verdict.message, r.verdict.measure, where))
    return out


def _check(assignor, name: str, bounds: Bounds):
    return check_model(protocol=protocol("cooperative"), assignor=assignor, assignor_name=name, rules="ha", bounds=bounds)


def _broken(name: str):
    broken = BROKEN[name][0]

    def assign(view):
        return broken(view) or reference(view)

    return assign


CASES = [
    ("ha", None),
    ("colocated_standby", "no-colocation"),
    ("too_many_warmups", "warmup-bound"),
    ("lagging_active", "caught-up-active"),
    ("drops_task", "one-active"),
]


@pytest.mark.parametrize("name,breaks", CASES)
def test_the_worker_judges_as_the_process_does(monkeypatch, name, breaks):
    bounds = Bounds() if name == "ha" else Bounds(events=1)

    def run(*, fork: bool, local_first: int):
        monkeypatch.setattr(run_judge_worker, "LOCAL_FIRST", local_first)
        monkeypatch.setattr(run_judge_worker, "_can_fork", lambda: fork)
        monkeypatch.setattr(run_judge_worker, "core_spare", lambda since: True)  # whatever the machine's load
        if name == "ha":
            with resolve("ha") as ha:
                return _check(ha, "ha", bounds)
        return _check(_broken(name), name, bounds)

    here = run(fork=False, local_first=0)
    for local_first in (0, 3):  # all pairs on the worker; the first few in-process, the rest there
        there = run(fork=True, local_first=local_first)
        assert _report(there) == _report(here)
        assert there.exploration.stats.states == here.exploration.stats.states
    if breaks is not None:
        assert here.status(breaks).value == "violated"
    else:
        assert all(r.verdict.status.value in ("holds", "not promised") for r in here.results)


def test_a_worker_that_dies_leaves_the_pairs_to_the_process(monkeypatch):
    """The child ends before judging anything: the parent judges every deferred pair itself."""
    monkeypatch.setattr(run_judge_worker, "LOCAL_FIRST", 0)
    monkeypatch.setattr(run_judge_worker, "_can_fork", lambda: True)
    monkeypatch.setattr(run_judge_worker, "core_spare", lambda since: True)
    monkeypatch.setattr(run_judge_worker, "_serve", lambda conn, *args: conn.close())
    bounds = Bounds(events=1)
    died = _check(_broken("drops_task"), "drops_task", bounds)
    monkeypatch.setattr(run_judge_worker, "_can_fork", lambda: False)
    here = _check(_broken("drops_task"), "drops_task", bounds)
    assert _report(died) == _report(here)
    assert here.status("one-active").value == "violated"


def test_the_worker_counts_in_the_reported_peak_rss(monkeypatch):
    """With the worker, the reported peak is at least this process's own peak and counts the
    worker's private memory while it lived (JudgeWorker.peak_rss)."""
    monkeypatch.setattr(run_judge_worker, "LOCAL_FIRST", 0)
    monkeypatch.setattr(run_judge_worker, "_can_fork", lambda: True)
    monkeypatch.setattr(run_judge_worker, "core_spare", lambda since: True)
    import resource

    with resolve("ha") as ha:
        result = _check(ha, "ha", Bounds(events=1))
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    assert result.exploration.stats.peak_rss_bytes >= own * 0.99


def test_no_worker_starts_when_no_core_is_spare(monkeypatch):
    """Every core busy when the worker would start: no child, every pair judged here, the same results."""
    started = []
    monkeypatch.setattr(run_judge_worker.JudgeWorker, "_start", lambda self: started.append(self))
    monkeypatch.setattr(run_judge_worker, "LOCAL_FIRST", 0)
    monkeypatch.setattr(run_judge_worker, "_can_fork", lambda: True)
    asked = []
    monkeypatch.setattr(run_judge_worker, "core_spare", lambda since: asked.append(since) or False)
    bounds = Bounds(events=1)
    busy = _check(_broken("drops_task"), "drops_task", bounds)
    assert asked and not started
    monkeypatch.setattr(run_judge_worker, "_can_fork", lambda: False)
    assert _report(busy) == _report(_check(_broken("drops_task"), "drops_task", bounds))
    assert busy.status("one-active").value == "violated"
