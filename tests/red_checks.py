"""What the red-team tests ask of ``check``: one ``py:`` assignor of ``tests/assignors`` explored
as ``rebalproof check`` explores it (symmetry auto, partial-order reduction on), its verdicts by
property name."""

from __future__ import annotations

import sys
from pathlib import Path

from rebalproof.model.assignors.spec import resolve
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_protocol import protocol
from rebalproof.properties.run_check import check_model

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # ``tests.assignors`` importable


def check_verdicts(spec: str, *, proto: str, rules: str, bounds: Bounds, por: bool = True) -> dict:
    """{property name: verdict} of ``check --protocol proto --rules rules --assignor py:spec`` (``--por off``: ``por=False``)."""
    with resolve(f"py:{spec}") as assignor:
        result = check_model(protocol=protocol(proto), assignor=assignor, bounds=bounds, rules=rules, symmetry="auto", por=por)
    return {r.property.name: r.verdict for r in result.results}
