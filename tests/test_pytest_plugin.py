"""The pytest plugin: a user's suite gets the ``rebalproof_oracle`` fixture and readable failures."""

import json
import textwrap

import pytest

from rebalproof.model.codec import read_json

from conftest import ROOT

pytest_plugins = ["pytester", "rebalproof.pytest_plugin"]  # the plugin is imported here first, so pytest can rewrite it


def Oracle():
    from rebalproof.pytest_plugin import Oracle

    return Oracle()

SETTLED = read_json(ROOT / "examples" / "inputs" / "settled.json")

USER_TESTS = textwrap.dedent(
    """
    import json

    REBALANCE = json.loads({rebalance!r})

    def keep(obj):  # returns the current assignment: settled input, so correct here
        return {{"assignment": {{m["id"]: {{r: m.get(r, []) for r in ("active", "standby")}} for m in obj["members"]}}}}

    def hoard(obj):  # everything active on the first member
        first = obj["members"][0]["id"]
        return {{"assignment": {{m["id"]: {{"active": [t["id"] for t in obj["tasks"]] if m["id"] == first else []}}
                                for m in obj["members"]}}}}

    def crash(obj):
        raise RuntimeError("boom")

    def swap_stateless(obj):  # moves every stateless task to the next member: never settles
        ids = sorted(m["id"] for m in obj["members"])
        out = {{i: {{"active": [], "standby": []}} for i in ids}}
        stateless = {{t["id"] for t in obj["tasks"] if not t.get("stateful", True)}}
        for m in obj["members"]:
            out[m["id"]]["standby"] = m.get("standby", [])
            for t in m.get("active", []):
                to = ids[(ids.index(m["id"]) + 1) % len(ids)] if t in stateless else m["id"]
                out[to]["active"].append(t)
        return {{"assignment": out}}

    def test_check_ok(rebalproof_oracle):
        report = rebalproof_oracle.check(REBALANCE, keep(REBALANCE))
        assert report.ok

    def test_check_violated(rebalproof_oracle):
        rebalproof_oracle.check(REBALANCE, hoard(REBALANCE))

    def test_check_assignor_ok(rebalproof_oracle):
        assert len(rebalproof_oracle.check_assignor(keep, [REBALANCE, REBALANCE])) == 2

    def test_check_assignor_crash(rebalproof_oracle):
        rebalproof_oracle.check_assignor(crash, [REBALANCE])

    def test_check_assignor_spec(rebalproof_oracle):
        rebalproof_oracle.check_assignor("exec:node {root}/examples/ha_assignor.js", [REBALANCE])

    def test_metamorphic_ok(rebalproof_oracle):
        rebalproof_oracle.metamorphic(keep, REBALANCE, names=("reordering", "idempotence"))

    def test_metamorphic_violated(rebalproof_oracle):
        rebalproof_oracle.metamorphic(swap_stateless, REBALANCE, names=("idempotence",))
    """
)


def test_a_user_suite_gets_the_fixture_and_readable_failures(pytester):
    pytester.makepyfile(test_user=USER_TESTS.format(rebalance=json.dumps(SETTLED), root=ROOT))
    result = pytester.runpytest("-p", "rebalproof.pytest_plugin", "-W", "ignore::pytest.PytestAssertRewriteWarning")
    result.assert_outcomes(passed=4, failed=3)
    result.stdout.fnmatch_lines([
        "*AssertionError: rebalproof oracle (ha rules): the answer violates * properties",
        "*  standby-count: * [[]tasks *",
        "*AssertionError: rebalproof oracle (ha rules): 1 of 1 inputs fail",
        "*input 0: finding (crash): *RuntimeError: boom*",
        "*AssertionError: rebalproof metamorphic check (seed 0): 1 violated",
        "*idempotence: answer 1 is balanced, caught up and asks no probing rebalance, but fed back*",
    ])


def test_the_fixture_in_this_module(rebalproof_oracle):
    assert rebalproof_oracle.check(SETTLED, {"assignment": {m["id"]: {"active": m["active"], "standby": m["standby"]}
                                                          for m in SETTLED["members"]}}).ok


def test_failures_list_every_violation():
    oracle = Oracle()
    answer = {"assignment": {"I1": {"active": ["0_0", "0_0"]}, "I2": {}, "I3": {}}}
    with pytest.raises(AssertionError) as caught:
        oracle.check(SETTLED, answer)
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("rebalproof oracle (ha rules): the answer violates")
    assert any(line.startswith("  one-active:") for line in lines)
    assert any(line.startswith("  no-colocation:") for line in lines)


def test_exec_assignors_it_started_are_stopped_when_the_test_ends():
    oracle = Oracle()
    assignor = oracle.assignor(f"exec:node {ROOT / 'examples' / 'ha_assignor.js'}")
    oracle.check_assignor(assignor, [SETTLED])
    assert assignor.backend.pid is not None
    oracle.close()
    assert assignor.backend.pid is None


def test_a_plain_function_is_a_py_assignor_with_json_calls():
    def keep(obj):
        return {"assignment": {m["id"]: {"active": m["active"], "standby": m["standby"]} for m in obj["members"]}}

    from rebalproof.pytest_plugin import FunctionAssignor

    assignor = Oracle().assignor(keep)
    assert isinstance(assignor, FunctionAssignor)
    from rebalproof.model.codec import decode_input

    view = decode_input(SETTLED)
    assert assignor(view).of("I1").active == ("0_0", "1_0") and assignor.calls == 1
    with pytest.raises(TypeError, match="spec"):
        Oracle().assignor(42)
