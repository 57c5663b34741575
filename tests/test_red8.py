"""Red team 8 (2026-11-29): a KIP-441 assignor written from seed 002 alone
(``tests/assignors/red8_ha.py``), its variants in the choices the seed leaves open, and seeded bugs.

Two of its bugs passed ``check``: a former owner's copy kept for one more probing rebalance, at
which every active was re-dealt (``b_extra_then_swap``), and standbys given to stateless tasks,
then every active swapped with its copy in a settled group (``b_settled_swap_sl``). Any copy
beyond the need switched ``fixpoint``'s premise off for the whole layout; now the actives no
extra copy serves stay pinned (docs/DESIGN.md, ``fixpoint``).
"""

from __future__ import annotations

import json

import pytest

from rebalproof.model.group_bounds import Bounds
from red_checks import check_verdicts


def run(variant: str, bounds: Bounds):
    return check_verdicts(f"tests.assignors.red8_ha:{variant}", proto="cooperative", rules="ha", bounds=bounds)


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


def test_an_active_given_to_the_member_furthest_behind_is_caught():
    """Red team 8's third miss: with every behind copy at ``acceptable_recovery_lag + 1``, an
    assignor giving a task with no caught-up member to the member *furthest* behind answered as
    a correct one does (seed 002: "If there is no such instance, then it assigns the active task
    to the instance that is closest to catching up"). The readings that spread behind copies
    apart by load are judged (not explored): the bug breaks ``caught-up-active`` alone, on a
    probe, and a correct variant keeps every promise at the same bounds."""
    bounds = Bounds(standbys=0, boundary_lags=True)
    verdicts = run("b_behind_worst", bounds)
    violated = {name for name, v in verdicts.items() if v.status.name == "VIOLATED"}
    assert violated == {"caught-up-active"}, violated
    assert "more caught up (rank 10001)" in verdicts["caught-up-active"].message
    for variant in ("natural", "reverse"):
        bad = {name: v.message for name, v in run(variant, bounds).items() if v.status.name == "VIOLATED"}
        assert not bad, (variant, bad)


def test_a_probe_violation_has_a_trace_that_replays_exactly(tmp_path):
    from rebalproof.cli.main import main as cli

    trace_dir = tmp_path / "traces"
    code = cli(["check", "--quiet", "--standbys", "0", "--assignor", "py:tests.assignors.red8_ha:b_behind_worst", "--trace-dir", str(trace_dir)])
    assert code == 1
    trace = next(trace_dir.glob("*caught-up-active.json"))
    last = json.loads(trace.read_text())["steps"][-1]
    assert last["action"]["kind"] == "rebalance" and last["action"]["lags"] in ("behind-fewer-closer", "behind-more-closer")
    assert cli(["replay", str(trace)]) == 0  # every step replays exactly, the probe included
