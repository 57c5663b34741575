"""Operating Spark: settings, the Java check, session reuse, quiet and offline start-up."""

import os
import sys

import pytest

from rebalproof.errors import InputError
from rebalproof.pipeline import session as session_module
from rebalproof.pipeline.session import SparkSettings, check_java, is_local_master, spark_session


@pytest.fixture(scope="session")
def spark():
    return spark_session(master="local[2]")


@pytest.fixture
def no_java(monkeypatch, tmp_path):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    check_java.cache_clear()
    yield
    check_java.cache_clear()


def test_missing_java_is_one_clear_line(no_java):
    with pytest.raises(InputError) as info:
        check_java()
    message = str(info.value)
    assert message.startswith("Java 17 is needed by Spark")
    assert "openjdk-17-jre-headless" in message and "\n" not in message


def test_old_java_is_refused(monkeypatch, tmp_path):
    fake = tmp_path / "bin" / "java"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho \'openjdk version "11.0.2" 2019-01-15\' >&2\n')
    fake.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    check_java.cache_clear()
    try:
        with pytest.raises(InputError, match="found Java 11"):
            check_java()
    finally:
        check_java.cache_clear()


def test_missing_java_stops_before_spark_starts(no_java, monkeypatch):
    monkeypatch.setattr(session_module, "_current", None)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    with pytest.raises(InputError, match="Java 17 is needed"):
        spark_session(master="local[1]")


@pytest.mark.parametrize(
    "kwargs, message",
    [({"partitions": 0}, "partitions"), ({"driver_memory": "lots"}, "driver memory"), ({"master": " "}, "master is empty")],
)
def test_bad_settings_say_what_to_give(kwargs, message):
    with pytest.raises(InputError, match=message):
        SparkSettings(**kwargs)


def test_local_masters():
    assert all(is_local_master(m) for m in (None, "local", "local[2]", "local[*]", "local[2,3]"))
    assert not any(is_local_master(m) for m in ("spark://h:7077", "yarn", "k8s://https://h"))


def test_local_settings_stay_on_loopback():
    conf = session_module._conf_items(SparkSettings(master="local[2]", partitions=3))
    assert conf["spark.driver.host"] == conf["spark.driver.bindAddress"] == "127.0.0.1"
    assert conf["spark.ui.enabled"] == "false" and conf["spark.ui.showConsoleProgress"] == "false"
    assert conf["spark.default.parallelism"] == "3"
    assert "log4j2.properties" in conf["spark.driver.extraJavaOptions"]
    assert "-XX:TieredStopAtLevel=1" in conf["spark.driver.extraJavaOptions"].split()  # local mode: a lighter JVM
    cluster = session_module._conf_items(SparkSettings(master="spark://h:7077", ui=True))
    assert "spark.driver.host" not in cluster and cluster["spark.ui.enabled"] == "true"
    assert "TieredStopAtLevel" not in cluster.get("spark.driver.extraJavaOptions", "")


def test_session_is_reused_and_configured(spark):
    assert spark_session(master="local[2]") is spark
    context = spark.sparkContext
    assert context.master == "local[2]"
    assert os.environ["SPARK_LOCAL_IP"] == "127.0.0.1"
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    assert context.parallelize(range(10), 2).map(lambda x: x * x).sum() == 285
    worker_python = context.parallelize([0], 1).map(lambda _: __import__("sys").executable).collect()
    assert worker_python == [sys.executable]


def test_under_spark_submit_its_master_and_network_are_left_alone(monkeypatch):
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")
    conf = session_module._conf_items(SparkSettings())
    assert "spark.master" not in conf and "spark.driver.host" not in conf
    assert "spark.driver.memory" not in conf and "spark.driver.extraJavaOptions" not in conf
    assert session_module._conf_items(SparkSettings(master="local[3]"))["spark.master"] == "local[3]"


def test_submit_entry_point_prints_its_paths(capsys):
    from rebalproof.pipeline import submit

    assert submit.main(["--path"]) == 0 and capsys.readouterr().out.strip().endswith("submit.py")
    assert submit.main(["--log4j"]) == 0 and capsys.readouterr().out.strip().startswith("file:///")


@pytest.mark.parametrize(
    "name", ["frontier", "space", "suite", "svg", "toymodels", "rebalances", "groupbfs"]
)
def test_doctests(name):
    import doctest
    import importlib

    module = importlib.import_module(f"rebalproof.pipeline.{name}")
    assert doctest.testmod(module).failed == 0
