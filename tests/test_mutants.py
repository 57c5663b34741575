"""The mutation suite (issue #10 item 7): each wrong assignor of ``tests/mutants.py`` is caught.

For every mutant, ``check`` at the bounds :data:`tests.mutants.MUTANTS` gives it must exit 1 with
the mutant's property violated and a shortest counterexample that replays; the correct
assignors (``examples/ha_assignor.py`` as ``py:``, the built-in ``ha``) must exit 0 at the same
bounds. ``python tests/test_mutants.py`` prints the README's table (states and seconds).
"""

from __future__ import annotations

import re
import sys
import time

import pytest

from rebalproof.model.group_assignor import resolve_for_model
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_protocol import parse_protocol
from rebalproof.properties.run_check import check_model
from rebalproof.traces.replay import replay

from conftest import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # py:tests.mutants:... and py:examples.ha_assignor:... import from the root

from tests.mutants import MUTANTS  # noqa: E402
from tests.test_manifest import TIERS  # noqa: E402

CORRECT = ("py:examples.ha_assignor:assign", "ha")

#: Steps of each mutant's shortest counterexample (BFS): a change here is a change of the model.
#: the shortest counterexample's steps; 1 where a rebalance requested in the warm start's group
#: already shows the bug (GroupModel.requested_probes; before, ping_pong and stateless_swap took 9
#: steps to a rebalance of a settled group, stateless_piled 6, task_twice and one_standby_at_most 2)
STEPS = {
    "owner_blind": 2, "kafka_13600": 5, "standby_as_warmup": 4, "task_twice": 1, "probe_forever": 4,
    "ping_pong": 1, "stateless_swap": 1, "one_standby_at_most": 1, "two_members_only": 2,
    "stateless_piled": 1, "standbys_from_memory": 3, "warmups_unbounded": 2, "standbys_by_load": 2,
    "lag_strict": 5, "rank_unfloored": 1,
}


def run(spec: str, bounds: dict):
    """As ``rebalproof check`` runs it: partial-order reduction on (it must hide no mutant), boundary
    lags on for a ``py:`` assignor unless the bounds say otherwise."""
    with resolve_for_model(spec) as resolved:
        bounds = {"boundary_lags": resolved.default_boundary_lags, **bounds}
        return check_model(protocol=parse_protocol("cooperative"), assignor=resolved.assignor, assignor_name=resolved.name,
                           rules="ha", bounds=Bounds(**bounds), symmetry=False, por=True)


def test_ten_mutants_or_more_one_bug_each():
    assert len(MUTANTS) >= 10 and len({m.name for m in MUTANTS}) == len(MUTANTS)
    assert len([m for m in MUTANTS if m.hides_at is not None]) >= 4  # bugs only some configurations show
    assert set(STEPS) == {m.name for m in MUTANTS}


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_the_mutant_is_caught_with_its_property_and_a_shortest_trace(mutant):
    result = run(f"py:tests.mutants:{mutant.name}", mutant.bounds)
    assert result.exploration.complete or "depth" in mutant.bounds
    assert result.exit_code() == 1
    verdict = result.result(mutant.property).verdict
    assert verdict.status.value == "violated", f"{mutant.name}: {mutant.property} {verdict.status}: {verdict.message}"
    trace = result.traces[mutant.property]
    # a run that never settles is a lasso (prefix and cycle); every other mutant a shortest path
    assert trace["kind"] == ("lasso" if mutant.property == "converges" else "safety") and len(trace["steps"]) - 1 == STEPS[mutant.name]
    claim = replay(trace).claim
    assert claim is not None and claim.status == "confirmed", claim


HIDING = [m for m in MUTANTS if m.hides_at is not None]


@pytest.mark.parametrize("mutant", HIDING, ids=[m.name for m in HIDING])
def test_bugs_of_some_configurations_hide_at_smaller_bounds(mutant):
    """Why the bounds matter: at ``hides_at`` the mutant's property holds (the bug needs more)."""
    result = run(f"py:tests.mutants:{mutant.name}", mutant.hides_at)
    assert result.exploration.complete
    assert result.status(mutant.property).value == "holds", result.result(mutant.property).verdict.message


#: the mutants' bounds, a depth bound dropped: the correct assignors are explored completely there
BOUNDS = sorted({tuple(sorted((k, v) for k, v in m.bounds.items() if k != "depth")) for m in MUTANTS})


@pytest.mark.parametrize("spec", CORRECT)
@pytest.mark.parametrize("bounds", BOUNDS, ids=[",".join(f"{k}={v}" for k, v in b) or "default" for b in BOUNDS])
def test_the_correct_assignors_pass_at_the_same_bounds(spec, bounds):
    result = run(spec, dict(bounds))
    assert result.exploration.complete
    assert result.exit_code() == 0, [(r.property.name, r.verdict.message) for r in result.violated]


@pytest.mark.parametrize("tier", list(TIERS), ids=list(TIERS))
def test_the_correct_example_passes_at_every_calibration_tier(tier):
    """#10 "For the references and examples: exit 0 at every tier": the worked example
    (``examples/ha_assignor.py``) keeps every ``ha`` promise, complete, at the default bounds and
    at each wider tier the references are calibrated at (tests/manifest.toml)."""
    result = run(CORRECT[0], TIERS[tier])
    assert result.exploration.complete
    if tier == "partitions3":
        assert result.exploration.states == 21_691  # the README's figure
    assert result.exit_code() == 0, [(r.property.name, r.verdict.message) for r in result.violated]


def test_the_readme_table_says_what_the_mutants_give():
    """The README's mutation table: each mutant's property, bounds and shortest trace's steps as
    pinned here (its states and seconds are one run's, printed by ``python tests/test_mutants.py``)."""
    readme = (ROOT / "README.md").read_text()
    rows = {m.group(1): m.groups()[1:] for m in re.finditer(r"^\| `(\w+)` \| [^|]+ \| `([\w-]+)` \| `([^`]*)` \| [\d,]+ \| (\d+)(?: \(lasso\))? \|", readme, flags=re.M)}
    for m in MUTANTS:
        assert rows.get(m.name) == (m.property, _flags(m.bounds), str(STEPS[m.name])), m.name


def _flags(bounds: dict) -> str:
    return " ".join(f"--{k.replace('_', '-')} {v}" for k, v in sorted(bounds.items()))


if __name__ == "__main__":  # the README table
    print("| mutant | bug | property named | bounds | states | steps | seconds |")
    print("|---|---|---|---|---|---|---|")
    for m in MUTANTS:
        started = time.perf_counter()
        result = run(f"py:tests.mutants:{m.name}", m.bounds)
        seconds = time.perf_counter() - started
        trace = result.traces.get(m.property)
        steps = "-" if trace is None else f"{len(trace['steps']) - 1}{' (lasso)' if trace['kind'] == 'lasso' else ''}"
        print(f"| `{m.name}` | {m.bug} | `{m.property}` | `{_flags(m.bounds)}` | {result.exploration.states:,} | {steps} | {seconds:.1f} |")
    for spec in CORRECT:
        for b in BOUNDS:
            started = time.perf_counter()
            result = run(spec, dict(b))
            print(f"| {spec} | - | exit {result.exit_code()} | `{_flags(dict(b))}` | {result.exploration.states:,} | - | {time.perf_counter() - started:.1f} |")
