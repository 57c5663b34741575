"""What is checked: the leader's view, assignments, assignors, the group state machine, the explorer."""

from rebalproof.model.assignment import ROLES, Assignment, MemberAssignment
from rebalproof.model.codec import decode_assignment, decode_input, encode_assignment, encode_input
from rebalproof.model.view import Config, Member, RebalanceInput, Task

__all__ = [
    "ROLES",
    "Assignment",
    "MemberAssignment",
    "Config",
    "Member",
    "RebalanceInput",
    "Task",
    "decode_input",
    "encode_input",
    "decode_assignment",
    "encode_assignment",
]
