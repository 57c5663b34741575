"""The leader's view: codecs round-trip, validation names the problem, ranking follows KIP-441."""

import doctest
import json

import pytest

from rebalproof.errors import InputError
from rebalproof.model import balance, codec, names, ranking
from rebalproof.model.codec import decode_assignment, decode_input, encode_assignment, encode_input

EXAMPLE = {
    "config": {"num_standby_replicas": 1, "acceptable_recovery_lag": 10000, "max_warmup_replicas": 2},
    "tasks": [{"id": "0_0", "stateful": True}, {"id": "1_0", "stateful": False}],
    "members": [
        {"id": "I1", "capacity": 1, "leaving": False, "active": ["0_0"], "standby": [], "warmup": [], "lags": {"0_0": 0}}
    ],
    "previous_members": ["I1"],
}


@pytest.mark.parametrize("module", [codec, balance, names])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


def test_design_example_round_trips():
    view = decode_input(EXAMPLE)
    assert encode_input(view) == EXAMPLE
    assert decode_input(json.loads(json.dumps(encode_input(view)))) == view


def test_defaults_are_the_contracts():
    view = decode_input({"tasks": [{"id": "0_0"}], "members": [{"id": "I1"}]})
    assert (view.config.num_standby_replicas, view.config.acceptable_recovery_lag, view.config.max_warmup_replicas) == (0, 10000, 2)
    assert view.task("0_0").stateful and view.member("I1").capacity == 1 and not view.member("I1").leaving
    assert view.previous_members is None and view.is_new("I1") is None


@pytest.mark.parametrize(
    "doc, words",
    [
        ({"members": [{"id": "I1"}, {"id": "I1"}]}, "member 'I1' is listed twice"),
        ({"tasks": [{"id": "0_0"}, {"id": "0_0"}]}, "task '0_0' is listed twice"),
        ({"tasks": [{"id": "0_0"}], "members": [{"id": "I1", "lags": {"9_9": 3}}]}, "lag for unknown task '9_9'"),
        ({"tasks": [{"id": "0_0"}], "members": [{"id": "I1", "lags": {"0_0": -1}}]}, "must be at least 0, got -1"),
        ({"config": {"max_warmup_replicas": -2}}, "config.max_warmup_replicas: must be at least 0"),
        ({"config": {"num_standbys": 1}}, "unknown field 'num_standbys'"),
        ({"tasks": [{"id": "0_0"}], "members": [{"id": "I1", "active": ["0_0"], "warmup": ["0_0"]}]}, "lists task '0_0' twice"),
        ({"tasks": [{"id": "0_0"}], "members": [{"id": "I1", "standby": ["0_0", "0_0"]}]}, "lists task '0_0' twice"),
        ({"members": [{"id": "I1", "active": ["7_7"]}]}, "unknown task '7_7'"),
        ({"members": [{"id": "I1", "capacity": 0}]}, "at least 1"),
        ({"members": [{"id": "I1", "capacity": True}]}, "whole number"),
        ({"members": "I1"}, "must be a list"),
        ([], "must be a JSON object"),
    ],
)
def test_validation_names_the_problem(doc, words):
    with pytest.raises(InputError) as info:
        decode_input(doc)
    assert words in str(info.value)
    assert "\n" not in str(info.value)


def test_assignment_ids_checked_against_input():
    view = decode_input(EXAMPLE)
    ok = {"assignment": {"I1": {"active": ["0_0", "1_0"]}}}
    assert encode_assignment(decode_assignment(ok, view))["assignment"]["I1"]["active"] == ["0_0", "1_0"]
    for bad, words in [
        ({"assignment": {"I1": {"active": ["0_0"]}, "I9": {}}}, "unknown member 'I9'"),
        ({"assignment": {"I1": {"active": ["5_5"]}}}, "unknown task '5_5'"),
        ({"assignment": {}}, "member 'I1' of the input is missing"),
        ({"assignment": {"I1": {"actives": []}}}, "unknown field 'actives'"),
        ({}, 'missing "assignment"'),
    ]:
        with pytest.raises(InputError, match=words.replace("(", r"\(")):
            decode_assignment(bad, view)


def test_duplicates_in_an_answer_are_kept_for_the_properties():
    view = decode_input(EXAMPLE)
    answer = decode_assignment({"assignment": {"I1": {"active": ["0_0", "0_0"]}}}, view)
    assert answer.actives_of("0_0") == ("I1", "I1")


def test_natural_order():
    assert names.sorted_ids(["I10", "I2", "I1"]) == ("I1", "I2", "I10")
    assert names.sorted_ids(["0_10", "0_2", "1_0"]) == ("0_2", "0_10", "1_0")
    assert names.subtopology_of("3_1") == "3" and names.subtopology_of("T1") == "T1"


def test_ranking_floors_at_acceptable_lag_and_no_state_ranks_last():
    view = decode_input(
        {
            "config": {"acceptable_recovery_lag": 100},
            "tasks": [{"id": "0_0"}, {"id": "1_0", "stateful": False}],
            "members": [
                {"id": "I1", "lags": {"0_0": 100}},
                {"id": "I2", "lags": {"0_0": 5}},
                {"id": "I3", "lags": {"0_0": 101}},
                {"id": "I4"},
                {"id": "I5", "active": ["0_0"]},
            ],
        }
    )
    assert ranking.ranked_candidates(view, "0_0") == ((0, "I1"), (0, "I2"), (0, "I5"), (101, "I3"), (ranking.NO_STATE, "I4"))
    assert ranking.most_caught_up(view, "0_0") == ("I1", "I2", "I5")
    assert ranking.most_caught_up(view, "1_0") == ("I1", "I2", "I3", "I4", "I5")
    assert not ranking.is_caught_up(view, "I3", "0_0")


def test_values_are_frozen_and_hashable():
    view = decode_input(EXAMPLE)
    with pytest.raises(AttributeError):
        view.members = ()
    assert hash(view) == hash(decode_input(EXAMPLE))


def test_atomic_write_leaves_an_ordinary_file(tmp_path):
    import os
    import stat

    from rebalproof.model.codec import write_json_atomic

    target = tmp_path / "out" / "result.json"
    write_json_atomic(target, {"ok": True})
    assert json.loads(target.read_text()) == {"ok": True}
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    assert [p.name for p in target.parent.iterdir()] == ["result.json"]  # no temporary left behind
