"""rebalproof: verification suite for Kafka-Streams-style task assignment and rebalance protocols.

The folders ``model/``, ``properties/``, ``solver/``, ``traces/``, ``pipeline/`` and ``cli/``
are mapped into this namespace (see ``pyproject.toml``).
"""

__version__ = "0.1.0"
