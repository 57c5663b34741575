"""Red team 5: the run properties ``check`` explores, judged on assignors it had never seen.

A helper wrote a KIP-441 and a KIP-429 assignor from the seeds (tests/assignors/red5_ha.py,
red5_learner.py), each with seeded bugs, and ran ``check`` on them at the defaults and wider
bounds (``--instances 4``, ``--partitions 3``, ``--standbys 0/2``, ``--capacities``,
``--stateless``, ``--events 1/3``, every protocol). Every violation on its correct assignors was
its own bug, every seeded bug was caught by the property the seeds point to once the bounds let
it happen. Two defects of ``check`` itself:

- ``--max-warmups 0`` was accepted, and then even the built-in ``ha`` never settled balanced
  (seed 002: max_warmup_replicas "Defaults to 2. Minimum is 1."): now exit 2
  (tests/test_check_cmd.py).
- Under ``--time-limit`` with ``--symmetry auto`` (the default), a reduced run of an assignor
  whose answers depend on names spent the whole limit; the check after it found the names, the
  exploration in full that must follow had no time left, and the command exited 0 with the
  violations unreported (``learner_hop`` at ``--standbys 0``). The reduced run's views are now
  checked under renamings each time their number doubles, so it stops where the reduction
  breaks and the exploration in full has the rest of the limit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rebalproof.model.assignors.spec import resolve
from rebalproof.model.explorer import explore
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_protocol import protocol
from rebalproof.properties.run_check import check_model

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HOP = "py:tests.assignors.red5_learner:learner_hop"


def test_a_reduced_run_stops_where_the_names_break_it():
    """``learner_hop`` moves an unready learner to another member by name order: the sampling
    before the run finds it equivariant, the reduced run's views do not. The reduced run stops at
    the first check after the break, not at its end, and the run in full finds the learner that
    never settles. Without the steps the reduced run is complete and only then found broken."""
    runs = []

    def recording(model, **kwargs):
        exp = explore(model, **kwargs)
        runs.append((kwargs["symmetry"], exp.complete, exp.bound, exp.states))
        return exp

    bounds = Bounds(standbys=0, subtopologies=1)  # 7,849 states in full (at 2 subtopologies: 288,345)
    with resolve(HOP) as assignor:
        result = check_model(protocol=protocol("learner"), assignor=assignor, bounds=bounds, rules="learner",
                             symmetry="auto", explorer=recording, por=True)
    (reduced, first_complete, first_bound, first_states), (full, complete, _, states) = runs
    assert reduced is True and full is False and complete
    assert not first_complete and "depend on names" in first_bound, first_bound
    assert first_states < states, (first_states, states)
    assert result.symmetry is False and result.symmetry_check.status.name == "VIOLATED"
    violated = {r.property.name for r in result.results if r.verdict.status.name == "VIOLATED"}
    assert {"converges", "no-shuffle-cycle", "scale-down-completes"} <= violated, violated


@pytest.mark.parametrize("spec", ["py:tests.assignors.red5_ha:assign", "py:tests.assignors.red5_learner:assign"])
def test_red_team_5s_correct_assignors_keep_their_promises(spec):
    """At the defaults, the independent KIP-441 assignor under the ha rules and the KIP-429 one
    under the learner protocol and rules: every promised property holds."""
    proto, rules = ("cooperative", "ha") if "red5_ha" in spec else ("learner", "learner")
    with resolve(spec) as assignor:
        result = check_model(protocol=protocol(proto), assignor=assignor, bounds=Bounds(), rules=rules, symmetry="auto", por=True)
    bad = {r.property.name: r.verdict.message for r in result.results if r.verdict.status.name == "VIOLATED"}
    assert not bad, bad


@pytest.mark.parametrize("bug", ["drop_learners", "learner_hop"])
def test_a_learner_assignor_that_drops_or_moves_its_learners_is_caught_in_one_answer(bug):
    """KIP-429 "Keep existing learner tasks' assignment unchanged": red team 5's ``drop_learners``
    kept every property before ``learners-kept``; ``learner_hop`` was caught by a long run only."""
    with resolve(f"py:tests.assignors.red5_learner:{bug}") as assignor:
        result = check_model(protocol=protocol("learner"), assignor=assignor, bounds=Bounds(standbys=0, subtopologies=1),
                             rules="learner", symmetry=False, por=True)
    verdicts = {r.property.name: r.verdict for r in result.results}
    assert verdicts["learners-kept"].status.name == "VIOLATED", verdicts["learners-kept"].message
    assert "is dropped before it is ready" in verdicts["learners-kept"].message


def test_the_capped_learner_variant_keeps_its_learners_in_a_run():
    """Its cap (max_warmup_replicas) never meets more learners than it allows in a run it made
    (no standbys: every restoring copy is a learner)."""
    with resolve("py:tests.assignors.red5_learner:assign_capped") as assignor:
        result = check_model(protocol=protocol("learner"), assignor=assignor, bounds=Bounds(standbys=0), rules="learner", symmetry=False, por=True)
    bad = {r.property.name: r.verdict.message for r in result.results if r.verdict.status.name == "VIOLATED"}
    assert not bad, bad
