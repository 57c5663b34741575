"""What must hold: named properties and three-valued verdicts.

Per rebalance (input, answer): :data:`PER_ASSIGNMENT` in
:mod:`rebalproof.properties.catalogue`, checked with :func:`check_assignment`.
"""

from rebalproof.properties.catalogue import (
    PER_ASSIGNMENT,
    RULE_SETS,
    AssignmentProperty,
    check_assignment,
    property_named,
)
from rebalproof.properties.verdict import Status, Verdict

__all__ = [
    "Status",
    "Verdict",
    "AssignmentProperty",
    "PER_ASSIGNMENT",
    "RULE_SETS",
    "check_assignment",
    "property_named",
]
