"""Spark jobs: the verification matrix, distributed exploration and corpus checks.

Importing this package does not start Spark (nor import pyspark): sessions start on first use,
through :func:`rebalproof.pipeline.session.spark_session`.
"""

from rebalproof.pipeline.bfs import Checkpointing, LevelReport, explore_distributed
from rebalproof.pipeline.session import SparkSettings, spark_session, stop_session
from rebalproof.pipeline.space import Exploration, StateSpace, Trace, explore_reference

__all__ = [
    "Checkpointing",
    "Exploration",
    "LevelReport",
    "SparkSettings",
    "StateSpace",
    "Trace",
    "explore_distributed",
    "explore_reference",
    "spark_session",
    "stop_session",
]
