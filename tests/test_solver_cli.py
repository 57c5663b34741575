"""``rebalproof optimal``: exit codes, text and JSON output, an honest timeout."""

import json
import sys

from rebalproof.cli.main import main
from rebalproof.model.codec import decode_input, encode_input
from rebalproof.properties import check_assignment
from rebalproof.solver.optimize import optimal
from rebalproof.solver.placement import solve_placement
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from solver import generate  # noqa: E402  (the benchmark's deterministic inputs)

VIEW = {
    "config": {"num_standby_replicas": 1},
    "tasks": [{"id": "0_0"}, {"id": "0_1"}, {"id": "1_0", "stateful": False}, {"id": "1_1", "stateful": False}],
    "members": [
        {"id": "I1", "active": ["0_0", "0_1", "1_0", "1_1"], "lags": {"0_0": 0, "0_1": 0}},
        {"id": "I2", "standby": ["0_0"], "lags": {"0_0": 1200}},
        {"id": "I3"},
    ],
    "previous_members": ["I1", "I2"],
}


def test_optimal_prints_a_proof_and_exits_0(tmp_path, capsys):
    path = tmp_path / "view.json"
    path.write_text(json.dumps(VIEW))
    assert main(["optimal", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OPTIMAL (proven) under the ha rules")
    assert "exhaustive" in out and '"probing_rebalance": false' in out  # 4 tasks: every layout scored
    flowed = solve_placement(decode_input(VIEW), "ha", small=0)  # the flow path proves the same by a cut
    assert flowed.status == "optimal" and flowed.bound("imbalance").method == "flow-cut"
    assert main(["optimal", str(path), "--json", "--engine", "z3"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "optimal" and all(o["proven"] for o in data["objectives"])
    assert [o["value"] for o in data["objectives"]] == [1, 2, 2, 1, 0]


def test_infeasible_and_bad_input(tmp_path, capsys):
    path = tmp_path / "view.json"
    path.write_text(json.dumps({"tasks": [{"id": "0_0"}], "members": []}))
    assert main(["optimal", str(path)]) == 1
    assert "INFEASIBLE" in capsys.readouterr().out
    path.write_text("{")
    assert main(["optimal", str(path)]) == 2


def test_timeout_is_inconclusive_with_best_found_and_bounds(tmp_path, capsys):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(encode_input(generate(100, 1000, seed=441))))  # proven in about a second, never in 0.01 s
    assert main(["optimal", str(path), "--timeout", "0.01", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "inconclusive" and data["assignment"] is not None
    first = data["objectives"][0]
    assert first["name"] == "imbalance" and first["proven"]
    spread = data["objectives"][1]
    assert spread["lower_bound"] <= spread["value"]


def test_bench_inputs_optimum_passes_the_oracle():
    view = generate(10, 50, seed=441)
    result = optimal(view, "ha")
    assert result.status == "optimal"
    for verdict in check_assignment(view, result.assignment, rules="ha"):
        assert not verdict.violated, (verdict.property, verdict.message)
