"""Any assignor inside the group model (issue 6): ``rebalproof check --assignor py:|exec:``.

External calls are memoised and counted against the distinct states explored; external
assignors are judged by the ``ha`` rules unless ``--rules`` says otherwise; ``--symmetry auto``
(their default) samples equivariance first, reports a name-dependent assignor with the renaming
and both answers, and reduces an equivariant one with identical verdicts.
"""

from __future__ import annotations

import hashlib
import json
import sys

from click.testing import CliRunner

from rebalproof.cli.check_cmd import command as check_command
from rebalproof.cli.main import main
from rebalproof.model.group_assignor import EXTERNAL_RULES, resolve_for_model
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_protocol import parse_protocol
from rebalproof.model.toy_assignors import BalancedChoices
from rebalproof.properties.run_check import check_model

from conftest import ROOT

CORRECT_PY = "py:examples.ha_assignor:assign"
SMALL = ["--instances", "3", "--initial", "2", "--subtopologies", "1", "--partitions", "3", "--standbys", "0", "--events", "1"]


def by_name_hash(request: dict) -> dict:
    """``py:`` contract: deals the tasks round-robin over the members in the order of a hash of
    their names, so the answer depends on what the instances are called."""
    members = sorted((m["id"] for m in request["members"]), key=lambda m: hashlib.sha256(m.encode()).hexdigest())
    out = {m: {"active": [], "standby": [], "warmup": []} for m in members}
    for i, task in enumerate(request["tasks"]):
        out[members[i % len(members)]]["active"].append(task["id"])
    return {"assignment": out, "probing_rebalance": False}


def statuses(report: dict) -> dict:
    return {p["property"]: p["status"] for p in report["properties"]}


def run_json(capsys, *args) -> tuple[int, dict]:
    code = main(["check", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


# -- call counts -------------------------------------------------------------------------

def test_external_calls_on_the_default_bounds_are_far_below_the_states(capsys):
    code, report = run_json(capsys, "--assignor", CORRECT_PY, "--symmetry", "off", "--no-boundary-lags")
    calls = report["assignor_calls"]
    assert code == 0 and report["complete"]
    # 1,779 with partial-order reduction (1,784 with --por off: the same 261 views, POR reduces only where no
    # rebalance follows and keeps every quiescent state, where a rebalance may be requested)
    assert calls["external"] is True and calls["distinct_states"] == report["statistics"]["distinct_states"] == 1779
    # each state asks for its view's answers once (the model keeps them while the state is expanded and
    # its edges watched): a hit is a state whose view an earlier state asked about. 244 views of the
    # rebalances explored, 17 more of rebalances requested in a quiescent group (GroupModel.requested_probes:
    # 18 views, one of them also a rebalance's explored)
    assert calls["calls"] == 244 + 17 and 0 < calls["memo_hits"] and calls["calls"] + calls["memo_hits"] <= calls["distinct_states"]
    assert calls["line"] == f"261 external calls for 1,779 distinct states (memo hits {calls['memo_hits']:,})"
    assert calls["calls"] * 5 < calls["distinct_states"]  # the memo: one call per distinct leader view


def test_boundary_lags_ask_each_view_at_most_twice_more(capsys):
    """The default for an external assignor: the same 244 views of rebalances explored, each also
    asked at the boundary readings that change it (481 of them), every answer the one at lag 0: the
    same states; the 17 more of rebalances requested in a quiescent group, and those requested views
    at their boundary readings (32, every one answered as at lag 0, so judged on nothing new)."""
    code, report = run_json(capsys, "--assignor", CORRECT_PY, "--symmetry", "off")
    calls = report["assignor_calls"]
    assert code == 0 and report["complete"] and report["bounds"]["boundary_lags"] is True
    assert report["boundary_lags"] == {"views": 481 + 32, "answered_otherwise": 0, "behind_views": 0}
    assert calls["distinct_states"] == 1779 and calls["calls"] == 244 + 481 + 17 + 32


def test_the_summary_line_says_calls_for_states(capsys):
    assert main(["check", "--assignor", CORRECT_PY, *SMALL, "--symmetry", "off"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("ok: every promised property holds")
    assert "external calls for" in last and "distinct states (memo hits" in last
    assert main(["check", "--assignor", "round-robin", *SMALL]) == 0
    assert "assignor calls for 26 distinct states (memo hits" in capsys.readouterr().out


# -- rules -------------------------------------------------------------------------------

def test_external_assignors_are_judged_by_ha_unless_told(capsys):
    assert EXTERNAL_RULES == "ha"
    with resolve_for_model(CORRECT_PY) as resolved:
        assert resolved.external and resolved.rules == "ha"
    with resolve_for_model("round-robin") as resolved:
        assert not resolved.external and resolved.rules is None
    _, by_default = run_json(capsys, "--assignor", CORRECT_PY, *SMALL)
    _, told = run_json(capsys, "--assignor", CORRECT_PY, *SMALL, "--rules", "none")
    assert by_default["rules"] == "ha" and told["rules"] is None
    assert statuses(by_default)["warmup-bound"] == "holds" and statuses(told)["warmup-bound"] == "not promised"
    help_text = CliRunner().invoke(check_command, ["--help"]).output
    assert "ha for py:/exec:" in help_text and "auto for py:/exec:" in help_text


# -- symmetry auto -----------------------------------------------------------------------

def test_symmetry_auto_reports_an_assignor_that_depends_on_names(capsys):
    spec = "py:test_blackbox_check:by_name_hash"
    code, report = run_json(capsys, "--assignor", spec, *SMALL)  # auto is the default for py:
    check = report["symmetry_check"]
    assert report["symmetry_mode"] == "auto" and report["symmetry"] is False
    assert check["reduced"] is False and check["observed"] == "violated"
    assert "depends on names" in check["message"] and check["renaming"]["members"]
    # the evidence: the answer to the renamed input (asked again here) is not the renamed answer
    from rebalproof.model.codec import decode_assignment

    actual = decode_assignment(check["actual"])
    assert actual.same_layout(decode_assignment(by_name_hash(json.loads(json.dumps(check["renamed_input"])))))
    assert not actual.same_layout(decode_assignment(check["expected"]))
    main(["check", "--assignor", spec, *SMALL])
    out = capsys.readouterr().out
    assert "symmetry auto: off (equivariance violated)" in out and "exploring without symmetry reduction" in out
    assert any(line.startswith("equivariance ") and "not promised" in line and "observed: violated" in line
               for line in out.splitlines())


def test_symmetry_auto_reduces_an_equivariant_assignor_with_identical_verdicts(capsys):
    cold = [*SMALL, "--start", "cold"]
    code_off, off = run_json(capsys, "--assignor", "balanced-choices", *cold, "--symmetry", "off")
    code_auto, auto = run_json(capsys, "--assignor", "balanced-choices", *cold, "--symmetry", "auto")
    assert auto["symmetry"] is True and auto["symmetry_check"]["reduced"] is True
    assert auto["symmetry_check"]["nontrivial"] > 0  # some renaming really moved a view
    assert auto["symmetry_check"]["views"] > 6  # views of the first levels, then views the reduced run reached
    assert statuses(auto) == statuses(off) and code_auto == code_off
    assert auto["statistics"]["distinct_states"] < off["statistics"]["distinct_states"]
    main(["check", "--assignor", "balanced-choices", *cold, "--symmetry", "auto"])
    out = capsys.readouterr().out
    assert "symmetry auto: on (equivariance held on every view reached, under every renaming)" in out
    assert "exploring with symmetry reduction" in out


def test_a_name_dependence_found_deep_in_the_reduced_space_means_a_full_exploration(capsys):
    """The correct example breaks ties by id: on the default bounds the first levels look
    equivariant, a view the reduced exploration reached does not, so it is explored in full
    and the calls made by the reduced run are not made again (the memo is kept)."""
    _, off = run_json(capsys, "--assignor", CORRECT_PY, "--symmetry", "off")
    _, auto = run_json(capsys, "--assignor", CORRECT_PY, "--symmetry", "auto")
    check = auto["symmetry_check"]
    assert check["reduced"] is False and check["observed"] == "violated"
    assert "reached by the reduced exploration" in check["message"] and "explored again without reduction" in check["message"]
    assert auto["symmetry"] is False and statuses(auto) == statuses(off)
    assert auto["statistics"]["distinct_states"] == off["statistics"]["distinct_states"]
    assert auto["assignor_calls"]["calls"] == off["assignor_calls"]["calls"]


def test_symmetry_auto_on_a_nondeterministic_equivariant_chooser():
    bounds = Bounds(instances=3, initial=2, subtopologies=1, partitions=3, standbys=0, events=1, start="cold")
    proto = parse_protocol("cooperative")
    off = check_model(protocol=proto, assignor=BalancedChoices(), bounds=bounds, symmetry=False)
    auto = check_model(protocol=proto, assignor=BalancedChoices(), bounds=bounds, symmetry="auto")
    assert auto.symmetry is True and auto.symmetry_check.reduce
    assert {r.property.name: r.verdict.status for r in auto.results} == {r.property.name: r.verdict.status for r in off.results}
    assert auto.exploration.states < off.exploration.states


def test_symmetry_auto_is_deterministic_in_its_seed(capsys):
    a = run_json(capsys, "--assignor", "py:test_blackbox_check:by_name_hash", *SMALL, "--symmetry-seed", "3")[1]
    b = run_json(capsys, "--assignor", "py:test_blackbox_check:by_name_hash", *SMALL, "--symmetry-seed", "3")[1]
    assert a["symmetry_check"] == b["symmetry_check"]


def test_declared_stays_the_default_for_built_ins(capsys):
    _, report = run_json(capsys, "--assignor", "round-robin", *SMALL)
    assert report["symmetry_mode"] == "declared" and "symmetry_check" not in report


def test_symmetry_modes_resolve_the_same_for_every_caller():
    import pytest

    from rebalproof.errors import InputError

    with resolve_for_model(CORRECT_PY) as external, resolve_for_model("balanced-choices") as declared, \
            resolve_for_model("round-robin") as undeclared:
        assert external.default_symmetry == "auto" and external.symmetry_for(None) == "auto"
        assert external.symmetry_for("declared") is False  # nothing declared for an external one
        assert declared.symmetry_for(None) is True and undeclared.symmetry_for(None) is False
        assert undeclared.symmetry_for("on") is True and declared.symmetry_for("off") is False
        with pytest.raises(InputError, match="--symmetry is one of"):
            external.symmetry_for("sometimes")


def test_an_assignor_failing_on_the_warm_start_is_a_finding_not_a_crash(tmp_path, capsys):
    crash = f"exec:{sys.executable} {ROOT / 'tests' / 'assignors' / 'crash.py'}"
    tiny = ["--instances", "2", "--initial", "2", "--subtopologies", "1", "--partitions", "2", "--standbys", "0", "--events", "0"]
    assert main(["check", "--assignor", crash, *tiny, "--trace-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "failed while settling the warm start" in out and "--start cold" in out and "finding: " in out
    (saved,) = tmp_path.glob("finding-crash-*.json")
    assert json.loads(saved.read_text())["input"]["members"]
    code, report = run_json(capsys, "--assignor", crash, *tiny)
    assert code == 1 and report["exit_code"] == 1 and report["finding"]["finding"] == "crash"


def test_an_assignor_failing_during_exploration_shows_the_input_it_failed_on(capsys):
    """The counterexample's message says "on the input below": check prints that input under the
    steps, and --json gives it as ``finding``, the shape of a failure at the warm start above."""
    crash = f"exec:{sys.executable} {ROOT / 'tests' / 'assignors' / 'crash.py'} 1"  # answers the warm start's call
    small = ["--instances", "3", "--initial", "2", "--subtopologies", "1", "--partitions", "2", "--standbys", "0", "--events", "1"]
    assert main(["check", "--assignor", crash, *small]) == 1
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith('Discovered "assignor-answers" counterexample'))
    assert "crashed on the input below" in lines[at]
    shown = next(line for line in lines[at:] if line.startswith("  input: "))
    sent = json.loads(shown.removeprefix("  input: "))
    # the first call after the warm start's: a rebalance requested in the settled group it starts in
    # (GroupModel.requested_probes), two members, the leader remembering them
    assert lines[at + 1].strip() == "1. rebalance (requested in a quiescent group)"
    assert len(sent["members"]) == 2 and sent["previous_members"] == ["I1", "I2"]
    code, report = run_json(capsys, "--assignor", crash, *small)
    assert code == 1 and report["finding"]["finding"] == "crash" and report["finding"]["input"] == sent
    assert report["finding"]["message"].startswith(f"{crash} crashed on the input below")
