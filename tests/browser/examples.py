"""Small counterexample traces found by the explorer, for the trace tests (about half a second each).

- ``single-owner``: ``cooperative:early_handover=true`` with a round-robin assignor hands a task to
  its new owner before the old owner revoked it (a safety violation at the last step);
- ``no-shuffle-cycle``: ``learner`` with the naive learner assignor (learners to any idle instance)
  shuffles one task between two members forever (a lasso).
"""

from __future__ import annotations

from rebalproof.model.explorer import explore
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_model import GroupModel
from rebalproof.model.group_protocol import parse_protocol
from rebalproof.model.toy_assignors import NaiveLearner, RoundRobin
from rebalproof.properties.run import RunContext, RunMonitor, evaluate
from rebalproof.traces.format import build_trace

__all__ = ["find_counterexamples", "counterexamples"]


def find_counterexamples(protocol: str, assignor, name: str, rules, bounds: Bounds) -> dict:
    """Property name -> trace JSON of every violated safety / lasso property of one check."""
    proto = parse_protocol(protocol)
    model = GroupModel(protocol=proto, bounds=bounds, assignor=assignor, assignor_name=name)
    ctx = RunContext(protocol=proto, rules=rules, bounds=bounds, assignor=name)
    monitor = RunMonitor(ctx, model)
    exp = explore(model, monitor=monitor)
    out = {}
    for r in evaluate(ctx, exp, monitor):
        if r.verdict.status.value == "violated" and r.discovery is not None and r.discovery.kind in ("safety", "lasso"):
            out[r.property.name] = build_trace(exp, r.discovery, protocol=proto.spec, assignor=name, bounds=bounds, config_json={})
    return out


def counterexamples() -> dict:
    """``{"single-owner": trace, "no-shuffle-cycle": trace}`` (see the module docstring)."""
    early = find_counterexamples(
        "cooperative:early_handover=true", RoundRobin(), "round-robin", None,
        Bounds(instances=3, initial=2, subtopologies=1, partitions=3, standbys=0, events=1),
    )
    naive = find_counterexamples(
        "learner", NaiveLearner(learners_to="any"), "learner-naive", "learner",
        Bounds(instances=3, initial=2, subtopologies=1, partitions=1, standbys=0, events=1),
    )
    return {"single-owner": early["single-owner"], "no-shuffle-cycle": naive["no-shuffle-cycle"]}
