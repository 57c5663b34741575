"""Published JSON Schemas (draft 2020-12) of the contract's ``RebalanceInput`` and ``Assignment``.

The schema says the shape; the codec also checks what a schema cannot (unknown ids,
duplicates across lists). ``rebalproof schema input|assignment`` prints them.
"""

__all__ = ["INPUT_SCHEMA", "ASSIGNMENT_SCHEMA", "SCHEMAS"]

_ID = {"type": "string", "minLength": 1}
_IDS = {"type": "array", "items": _ID, "default": []}
_COUNT = {"type": "integer", "minimum": 0}

INPUT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://rebalproof.dev/schema/rebalance-input.json",
    "title": "RebalanceInput",
    "description": "The leader's view of one rebalance (KIP-429 / KIP-441).",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "config": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "num_standby_replicas": {**_COUNT, "default": 0},
                "acceptable_recovery_lag": {**_COUNT, "default": 10000},
                "max_warmup_replicas": {**_COUNT, "default": 2},
            },
        },
        "tasks": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id"],
                "properties": {
                    "id": {**_ID, "description": "S_P: partition P of subtopology S"},
                    "stateful": {"type": "boolean", "default": True},
                },
            },
        },
        "members": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id"],
                "properties": {
                    "id": _ID,
                    "capacity": {"type": "integer", "minimum": 1, "default": 1},
                    "leaving": {"type": "boolean", "default": False},
                    "active": _IDS,
                    "standby": _IDS,
                    "warmup": _IDS,
                    "lags": {
                        "type": "object",
                        "description": "task id -> offsets behind the changelog end; a stateful task missing here has no local state",
                        "additionalProperties": _COUNT,
                        "default": {},
                    },
                },
            },
        },
        "previous_members": {
            "type": ["array", "null"],
            "items": _ID,
            "default": None,
            "description": "the leader's memory of the last round; absent or null when it was lost (leader fail-over), "
                           "which is not the empty list (a memory of no member: every member new)",
        },
    },
}

ASSIGNMENT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://rebalproof.dev/schema/assignment.json",
    "title": "Assignment",
    "description": "An assignor's answer: every input member appears, with possibly empty lists.",
    "type": "object",
    "additionalProperties": False,
    "required": ["assignment"],
    "properties": {
        "assignment": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"active": _IDS, "standby": _IDS, "warmup": _IDS},
            },
        },
        "probing_rebalance": {"type": "boolean", "default": False},
    },
}

SCHEMAS = {"input": INPUT_SCHEMA, "assignment": ASSIGNMENT_SCHEMA}
