"""Red team 8 (2026-11-29): a KIP-441 assignor written from seed 002 alone
(``tests/assignors/red8_ha.py``), its variants in the choices the seed leaves open, and seeded bugs.

Two of its bugs passed ``check``: a former owner's copy kept for one more probing rebalance, at
which every active was re-dealt (``b_extra_then_swap``), and standbys given to stateless tasks,
then every active swapped with its copy in a settled group (``b_settled_swap_sl``). Any copy
beyond the need switched ``fixpoint``'s premise off for the whole layout; now the actives no
extra copy serves stay pinned (docs/DESIGN.md, ``fixpoint``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rebalproof.model.assignors.spec import resolve
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_protocol import protocol
from rebalproof.properties.run_check import check_model

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def run(variant: str, bounds: Bounds):
    with resolve(f"py:tests.assignors.red8_ha:{variant}") as assignor:
        result = check_model(protocol=protocol("cooperative"), assignor=assignor, bounds=bounds, rules="ha", symmetry="auto", por=True)
    return {r.property.name: r.verdict for r in result.results}


@pytest.mark.parametrize(
    "variant, bounds",
    [
        ("natural", Bounds()),
        ("reverse", Bounds(capacities=(1, 2))),
        ("hashed", Bounds(standbys=0)),
        ("warm1_last", Bounds(max_warmups=1)),
        ("probe_extra", Bounds()),  # probes while any warmup is held: the extra copies judged too
        ("omitted", Bounds(stateless=2)),  # empty lists and a false probing flag left out
        ("target_pref", Bounds()),
    ],
)
def test_red_team_8s_correct_variants_keep_every_promise(variant, bounds):
    verdicts = run(variant, bounds)
    bad = {name: v.message for name, v in verdicts.items() if v.status.name == "VIOLATED"}
    assert not bad, bad
    assert verdicts["fixpoint"].status.name == "HOLDS"


@pytest.mark.parametrize(
    "variant, bounds",
    [
        ("b_extra_then_swap", Bounds()),
        ("b_settled_swap_sl", Bounds(stateless=2)),
    ],
)
def test_a_copy_beyond_the_need_no_longer_licenses_a_re_deal(variant, bounds):
    verdicts = run(variant, bounds)
    violated = {name for name, v in verdicts.items() if v.status.name == "VIOLATED"}
    assert violated == {"fixpoint"}, violated
    assert "no extra copy serves" in verdicts["fixpoint"].message
