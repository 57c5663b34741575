"""``spark-submit`` entry point: run any ``rebalproof`` command as a Spark application.

spark-submit takes a Python file, not a console script; this is that file. Under spark-submit
the master, deploy mode, memory and the rest come from spark-submit's own flags, and
:func:`rebalproof.pipeline.session.spark_session` uses the session spark-submit started
(``--master`` given to the command itself still wins)::

    spark-submit --master spark://head:7077 --driver-memory 4g \\
        "$(python -m rebalproof.pipeline.submit --path)" verify --out /shared/verify

    python -m rebalproof.pipeline.submit --path    # prints this file's path
    python -m rebalproof.pipeline.submit --log4j   # the quiet log configuration, as a file: URI

spark-submit starts the driver JVM itself, so Spark's start-up messages show unless its log
configuration is passed too: ``--driver-java-options "-Dlog4j2.configurationFile=$(python -m
rebalproof.pipeline.submit --log4j)"``.

Executors import ``rebalproof`` (the model and the properties run in the tasks): install it in
the Python that ``PYSPARK_PYTHON`` names on every node (the same virtualenv path everywhere), or
ship a packed environment with ``--archives env.tar.gz#env`` and
``--conf spark.pyspark.python=./env/bin/python``.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--path"]:
        print(__file__)
        return 0
    if argv == ["--log4j"]:
        from rebalproof.pipeline.session import LOG4J2_PROPERTIES

        print(LOG4J2_PROPERTIES.as_uri())
        return 0
    from rebalproof.cli.main import main as rebalproof

    return rebalproof(argv)


if __name__ == "__main__":
    sys.exit(main())
