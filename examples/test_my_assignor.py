"""How your own test suite uses rebalproof as its oracle: the ``rebalproof_oracle`` fixture.

Run from the repository root (see README.md here for the output)::

    pytest -p rebalproof.pytest_plugin examples/test_my_assignor.py

The correct example passes; the rotating one fails: its answers are valid and balanced, but
they move stateless tasks without need (``stable``), a settled group gets a changed answer, and
fed its own answer back it never settles.
"""

import json
from pathlib import Path

import pytest

from ha_assignor import assign  # the Python example: a plain function, dict in, dict out

HERE = Path(__file__).resolve().parent
INPUTS = {p.stem: json.loads(p.read_text()) for p in sorted((HERE / "inputs").glob("*.json"))}
ASSIGNORS = {
    "python": assign,
    "javascript": f"exec:node {HERE / 'ha_assignor.js'}",
    "rotating": f"exec:node {HERE / 'rotating_assignor.js'}",
}


@pytest.mark.parametrize("name", ASSIGNORS)
def test_every_answer_keeps_the_rules(rebalproof_oracle, name):
    rebalproof_oracle.check_assignor(ASSIGNORS[name], INPUTS.values())


@pytest.mark.parametrize("name", ASSIGNORS)
def test_fed_its_own_answer_it_settles(rebalproof_oracle, name):
    for rebalance in INPUTS.values():
        rebalproof_oracle.metamorphic(ASSIGNORS[name], rebalance, names=("idempotence",))


def test_one_answer(rebalproof_oracle):
    rebalance = INPUTS["settled"]
    rebalproof_oracle.check(rebalance, assign(rebalance))
