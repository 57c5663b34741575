"""A built-in assignor's answers computed ahead on a forked helper give the run computed in
one process exactly (:mod:`rebalproof.model.answers_ahead`): the same states, verdicts, first
discoveries, assignor calls and memo hits; a helper that dies leaves the answers to the process."""

from __future__ import annotations

import pytest

from rebalproof.model import answers_ahead
from rebalproof.model.assignors.spec import resolve
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_protocol import protocol
from rebalproof.properties.run_check import check_model


def _report(result) -> list:
    out = []
    for r in result.results:
        d = r.discovery
        where = None if d is None else (d.kind, d.state, d.action, d.message, d.path)
        out.append((r.property.name, r.verdict.status, r.verdict.message, r.verdict.measure, where))
    exp = result.exploration
    return [out, exp.stats.states, exp.stats.edges, list(exp.parent), list(exp.via), result.calls, result.memo_hits]


def _check(spec: str, proto: str, bounds: Bounds):
    with resolve(spec) as assignor:
        return check_model(protocol=protocol(proto), assignor=assignor, assignor_name=spec, rules=assignor.rules,
                           bounds=bounds, por=True)


CASES = [
    ("ha", "cooperative", Bounds()),
    ("sticky", "cooperative", Bounds(events=1)),
    ("learner", "learner", Bounds(events=1)),
]


@pytest.mark.parametrize("spec,proto,bounds", CASES)
def test_answers_ahead_give_the_same_run(monkeypatch, spec, proto, bounds):
    taken = []
    take = answers_ahead.AnswersAhead.take

    def counting(self, key):
        answers = take(self, key)
        taken.append(answers is not None)
        return answers

    monkeypatch.setattr(answers_ahead.AnswersAhead, "take", counting)
    monkeypatch.setattr(answers_ahead, "can_fork", lambda: False)
    here = _check(spec, proto, bounds)
    assert not taken
    monkeypatch.setattr(answers_ahead, "can_fork", lambda: True)
    monkeypatch.setattr(answers_ahead, "core_spare", lambda since: True)  # whatever the machine's load
    monkeypatch.setattr(answers_ahead, "START_AFTER", 0)
    ahead = _check(spec, proto, bounds)
    assert any(taken), "no answer came from the helper"
    assert _report(ahead) == _report(here)


def test_a_helper_that_dies_leaves_the_answers_to_the_process(monkeypatch):
    monkeypatch.setattr(answers_ahead, "START_AFTER", 0)
    monkeypatch.setattr(answers_ahead, "can_fork", lambda: True)
    monkeypatch.setattr(answers_ahead, "core_spare", lambda since: True)
    monkeypatch.setattr(answers_ahead, "_serve", lambda conn, *args: conn.close())
    died = _check("ha", "cooperative", Bounds(events=1))
    monkeypatch.setattr(answers_ahead, "can_fork", lambda: False)
    here = _check("ha", "cooperative", Bounds(events=1))
    assert _report(died) == _report(here)


def test_no_helper_starts_when_no_core_is_spare(monkeypatch):
    """Every core busy when the helper would start: no child, every answer computed here, the same run."""
    started = []
    monkeypatch.setattr(answers_ahead.AnswersAhead, "_start", lambda self: started.append(self))
    monkeypatch.setattr(answers_ahead, "can_fork", lambda: True)
    monkeypatch.setattr(answers_ahead, "START_AFTER", 0)
    asked = []
    monkeypatch.setattr(answers_ahead, "core_spare", lambda since: asked.append(since) or False)
    busy = _check("ha", "cooperative", Bounds(events=1))
    assert asked and not started
    monkeypatch.setattr(answers_ahead, "can_fork", lambda: False)
    assert _report(busy) == _report(_check("ha", "cooperative", Bounds(events=1)))


def test_a_core_is_spare_when_half_of_one_was_idle():
    from rebalproof.model import spare_core

    assert spare_core.spare_between((0, 0), (50, 100), cores=2)  # one idle core of two
    assert spare_core.spare_between((0, 0), (25, 100), cores=2)  # half a core
    assert not spare_core.spare_between((0, 0), (24, 100), cores=2)
    assert not spare_core.spare_between((0, 0), (0, 0), cores=2)  # nothing measured: not spare
    assert spare_core.spare_between((10, 100), (35, 150), cores=1)  # one core, half of it idle
    before = spare_core.cpu_times()
    if before is not None:  # Linux: ticks only grow
        after = spare_core.cpu_times()
        assert after[0] >= before[0] and after[1] >= before[1] >= before[0]
    assert isinstance(spare_core.core_spare(before), bool)


def test_doctests():
    import doctest

    from rebalproof.model import spare_core

    assert doctest.testmod(spare_core).failed == 0
