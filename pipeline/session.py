"""Operating Spark: one configured :class:`SparkSession` per process, quiet and offline.

What :func:`spark_session` sets up (the measured facts are in SPARK-NOTES.md):

- ``local[*]`` unless a master is given (``--master spark://host:7077``, ``yarn``, ``k8s://...``);
  under ``spark-submit`` the master and the JVM come from spark-submit and are left alone;
- logs at error level through the ``log4j2.properties`` shipped with this package, the console
  progress bar off and the web UI off unless asked for;
- no network access in local mode: ``SPARK_LOCAL_IP=127.0.0.1`` and the driver bound to loopback
  (otherwise start-up does a reverse-DNS lookup of the machine's address);
- workers run this very interpreter (``PYSPARK_PYTHON = sys.executable``), so the installed
  ``rebalproof`` package is importable in tasks; ``PYTHONHASHSEED`` fixed, which some RDD
  operations require;
- in local mode, the driver JVM (which is the executor too) with the quick JIT tier and the serial
  collector: it only passes bytes between Python processes, and starts with ~40% less CPU;
- driver memory and the default number of partitions configurable.

One session serves every call in a process: asking again with the same settings returns it;
asking with other settings stops it and starts a new one (~1 s) in the same driver JVM, so the
JVM-level options of the first start (driver memory, log configuration) stay. Java 17 is
checked first, so a missing Java is one clear line, not a stack trace.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from rebalproof.errors import InputError

__all__ = [
    "SparkSettings",
    "spark_session",
    "stop_session",
    "active_session",
    "check_java",
    "is_local_master",
    "default_parallelism",
    "LOG4J2_PROPERTIES",
]

LOG4J2_PROPERTIES = Path(__file__).with_name("log4j2.properties")
_JAVA_HINT = (
    "install openjdk-17-jre-headless (Debian/Ubuntu: apt-get install -y openjdk-17-jre-headless; "
    "macOS: brew install openjdk@17) or point JAVA_HOME at a Java 17+ installation"
)
_HASH_SEED = "0"

# PySpark imports pandas when it is installed and warns about pandas 3; nothing here uses pandas.
_PANDAS_WARNING = "PySpark does not yet fully support pandas"
warnings.filterwarnings("ignore", message=_PANDAS_WARNING, category=FutureWarning)


@dataclass(frozen=True, kw_only=True)
class SparkSettings:
    """How to run Spark. ``master=None``: spark-submit's master if launched by it, else ``local[*]``.

    ``partitions`` is the default number of partitions a job splits its work into
    (``None``: Spark's default parallelism, i.e. the number of cores).
    """

    master: str | None = None
    partitions: int | None = None
    driver_memory: str = "2g"
    ui: bool = False
    quiet: bool = True
    app_name: str = "rebalproof"

    def __post_init__(self):
        if self.partitions is not None and (isinstance(self.partitions, bool) or not isinstance(self.partitions, int) or self.partitions < 1):
            raise InputError(f"partitions must be a whole number of at least 1, got {self.partitions!r}")
        if not re.fullmatch(r"\d+[kmgtKMGT]?", self.driver_memory):
            raise InputError(f"driver memory must look like 2g or 512m, got {self.driver_memory!r}")
        if self.master is not None and not self.master.strip():
            raise InputError("the Spark master is empty; give e.g. local[*] or spark://host:7077")


_current: tuple[SparkSettings, object] | None = None


def is_local_master(master: str | None) -> bool:
    """True for ``local``, ``local[N]``, ``local[*]`` and ``local[N,F]`` (and for the default)."""
    return master is None or master == "local" or master.startswith("local[")


def _under_spark_submit() -> bool:
    # spark-submit's PythonRunner starts the JVM first and hands its port to Python.
    return "PYSPARK_GATEWAY_PORT" in os.environ


@cache
def check_java() -> str:
    """The path of a Java 17+ executable; :class:`InputError` saying how to install one if not.

    Looks at ``JAVA_HOME`` first, then ``PATH``, as Spark's launcher does.
    """
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home, "bin", "java")) if home and Path(home, "bin", "java").exists() else shutil.which("java")
    if not java:
        raise InputError(f"Java 17 is needed by Spark and was not found: {_JAVA_HINT}")
    try:
        probe = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"Java 17 is needed by Spark, but '{java} -version' failed ({exc}): {_JAVA_HINT}") from None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', probe.stderr + probe.stdout)
    if match:
        major = int(match.group(1))
        if major == 1 and match.group(2):  # "1.8.0_392" is Java 8
            major = int(match.group(2))
        if major < 17:
            raise InputError(f"Java 17 is needed by Spark, found Java {major} at {java}: {_JAVA_HINT}")
    return java


def _configure_environment(settings: SparkSettings) -> None:
    # under spark-submit the master may be a cluster's even when none is given here
    local = is_local_master(settings.master) and not (settings.master is None and _under_spark_submit())
    if local:
        os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
        os.environ["PYSPARK_PYTHON"] = sys.executable
    else:  # on a cluster the executors' Python may live elsewhere: the user's setting wins
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("PYTHONHASHSEED", _HASH_SEED)


# In local mode the driver JVM only moves bytes between Python processes (the work is Python's):
# the quick JIT tier and the one-thread collector cut the JVM's CPU time for a start and 20 small
# jobs from 13.5-16.1 s to 8.7-9.8 s (2-core machine, loaded, two runs each), start-up included.
_LOCAL_JVM_OPTIONS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


def _conf_items(settings: SparkSettings) -> dict[str, str]:
    submitted = _under_spark_submit()
    conf = {
        "spark.app.name": settings.app_name,
        "spark.ui.enabled": "true" if settings.ui else "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.python.worker.reuse": "true",
        "spark.executorEnv.PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", _HASH_SEED),
        "spark.pyspark.python": os.environ.get("PYSPARK_PYTHON", sys.executable),
        "spark.sql.warehouse.dir": str(Path(tempfile.gettempdir(), "rebalproof-spark-warehouse")),
        "spark.sql.execution.arrow.pyspark.enabled": "false",
    }
    if settings.master is not None or not submitted:
        conf["spark.master"] = settings.master or "local[*]"
    local = is_local_master(settings.master) and not (settings.master is None and submitted)
    if not submitted:
        conf["spark.driver.memory"] = settings.driver_memory
        options = [f"-Dlog4j2.configurationFile=file:{LOG4J2_PROPERTIES}"] if settings.quiet else []
        if local:
            options += _LOCAL_JVM_OPTIONS
        if options:
            conf["spark.driver.extraJavaOptions"] = " ".join(options)
    if local:
        conf["spark.driver.host"] = "127.0.0.1"
        conf["spark.driver.bindAddress"] = "127.0.0.1"
    if settings.partitions is not None:
        conf["spark.default.parallelism"] = str(settings.partitions)
        conf["spark.sql.shuffle.partitions"] = str(settings.partitions)
    return dict(sorted(conf.items()))


# Printed by every Spark 4 JVM (its launcher adds --add-modules=jdk.incubator.vector); no flag hides it.
_JVM_NOISE = (b"WARNING: Using incubator modules",)


def _forward_stderr(stream) -> None:
    out = getattr(sys.__stderr__, "buffer", None)
    for line in iter(stream.readline, b""):
        if out is not None and not line.startswith(_JVM_NOISE):
            out.write(line)
            out.flush()


def _launch_quiet_gateway(conf):
    """Start the driver JVM with its stderr passed through a filter that drops known noise."""
    from pyspark.java_gateway import launch_gateway

    gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
    threading.Thread(target=_forward_stderr, args=(gateway.proc.stderr,), name="spark-stderr", daemon=True).start()
    return gateway


def _start(settings: SparkSettings):
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    conf = SparkConf()
    for key, value in _conf_items(settings).items():
        conf.set(key, value)
    gateway = None
    if settings.quiet and SparkContext._gateway is None and not _under_spark_submit():
        gateway = _launch_quiet_gateway(conf)
    with warnings.catch_warnings():  # pytest resets the module-level filter for each test
        warnings.filterwarnings("ignore", message=_PANDAS_WARNING, category=FutureWarning)
        context = SparkContext(conf=conf, gateway=gateway)
        return SparkSession(context)


def spark_session(settings: SparkSettings | None = None, /, **overrides):
    """The process's SparkSession with ``settings`` (or keyword overrides of the defaults).

    Reuses the running session when the settings match; restarts it when they do not.

    Examples
    --------
    >>> spark = spark_session(master="local[2]")            # doctest: +SKIP
    >>> spark_session(master="local[2]") is spark            # doctest: +SKIP
    True
    """
    global _current
    settings = replace(settings or SparkSettings(), **overrides)
    if _current is not None:
        running_settings, running = _current
        if running_settings == settings and not _stopped(running):
            return running
        stop_session()
    if not _under_spark_submit():
        check_java()
    _configure_environment(settings)
    try:
        spark = _start(settings)
    except Exception as exc:  # the JVM did not come up: say so in one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"Spark did not start ({first}); run again with --spark-logs to see Spark's own messages") from None
    if settings.quiet:
        spark.sparkContext.setLogLevel("ERROR")
    _current = (settings, spark)
    return spark


def _stopped(spark) -> bool:
    context = spark.sparkContext
    return context._jsc is None  # set to None by SparkContext.stop()


def active_session():
    """The session :func:`spark_session` started in this process, or None."""
    if _current is None or _stopped(_current[1]):
        return None
    return _current[1]


def stop_session() -> None:
    """Stop the process's session (if any); the next :func:`spark_session` starts a fresh one."""
    global _current
    if _current is not None:
        _, spark = _current
        _current = None
        spark.stop()


def default_parallelism(spark) -> int:
    """How many tasks the session runs at once (cores in local mode)."""
    return max(1, int(spark.sparkContext.defaultParallelism))
