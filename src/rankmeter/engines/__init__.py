"""Where log work runs: one Ibis expression, run embedded on DuckDB or on Apache Spark.

:func:`connect` returns an Ibis backend. DuckDB (the default) is embedded and in memory: no
server, it reads Parquet, CSV and JSONL directly. Spark runs through Ibis' PySpark backend on a
session created once per process (``local[2]`` unless a master is given) and reused, since a
session takes seconds to start. Ibis, DuckDB and PySpark are extras, imported here on first use
so that ``import rankmeter`` stays fast.

:func:`evaluate_files` evaluates run files here or on Spark, as ``rankmeter evaluate`` does
(``engine="process"`` or ``"spark"``), and :func:`spark_for` gives the Spark backend such a
choice asks for, its settings and inputs checked (``_files``).
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Mapping
from typing import Any

from rankmeter.engines._files import (
    EVALUATION_ENGINES,
    SPARK_FORMATS,
    EvaluatedFiles,
    Stages,
    evaluate_files,
    no_stages,
    spark_for,
    spark_refusal,
    spark_subtopics,
)
from rankmeter.errors import PolicyError

__all__ = [
    "ENGINES",
    "EVALUATION_ENGINES",
    "SPARK_FORMATS",
    "EvaluatedFiles",
    "Stages",
    "connect",
    "engine_name",
    "evaluate_files",
    "no_stages",
    "spark_for",
    "spark_refusal",
    "spark_subtopics",
]

#: The engines :func:`connect` knows.
ENGINES = ("duckdb", "spark")

_ONLINE_EXTRA = "pip install 'rankmeter[online]'"
_SPARK_EXTRA = "pip install 'rankmeter[spark]'"

# Spark's logging: errors only. Without it a successful start prints some thirty lines of
# log4j on stderr (the default profile, WARNs about the host name and Hadoop's native
# library, "Setting default log level"), and every query draws a progress bar there.
# The level of the logger Spark's shells and PySpark start with (repl, gateway) set to the
# root's keeps Spark from announcing that it sets its own default level.
_LOG4J2_PROPERTIES = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""
#: What the JVM itself prints on stderr at start (not log4j): dropped, everything else passes.
_JVM_START_NOISE = (b"WARNING: Using incubator modules:",)

# One Spark session per process: starting one takes seconds and a JVM.
_spark_lock = threading.Lock()
_spark_backend: list[tuple[tuple[str, tuple[tuple[str, str], ...]], Any]] = []


def _ibis() -> Any:
    try:
        import ibis
    except ImportError as exc:
        raise PolicyError(
            f"search logs need the [online] extra (Ibis with DuckDB): {_ONLINE_EXTRA} ({exc})"
        ) from None
    return ibis


def connect(
    engine: str = "duckdb",
    *,
    spark_master: str | None = None,
    spark_conf: Mapping[str, str] | None = None,
) -> Any:
    """An Ibis backend for ``engine``: ``"duckdb"`` (embedded, in memory) or ``"spark"``.

    Parameters
    ----------
    engine : {"duckdb", "spark"}
        Where the log aggregations run.
    spark_master : str, optional
        The Spark master URL (default ``local[2]``). Only with ``engine="spark"``.
    spark_conf : mapping of str to str, optional
        More Spark settings (``{"spark.sql.shuffle.partitions": "4"}``). Only with
        ``engine="spark"``.

    Returns
    -------
    ibis backend
        A new in-memory DuckDB connection each call; for Spark, the one backend of this
        process (the session is started on the first call and reused; Spark allows one
        session per process, so a later call with another master or settings is refused).

    Raises
    ------
    PolicyError
        An unknown engine, Spark settings given for DuckDB, or a missing extra (the message
        names it: ``[online]`` for Ibis and DuckDB, ``[spark]`` for PySpark).
    """
    from rankmeter._validate import choice

    choice("engine", engine, ENGINES, what="where the log work runs")
    if engine == "duckdb":
        if spark_master is not None or spark_conf is not None:
            raise PolicyError(
                "spark_master and spark_conf are settings of engine='spark', not of engine='duckdb'"
            )
        ibis = _ibis()
        try:
            import duckdb  # noqa: F401
        except ImportError as exc:
            raise PolicyError(
                f"engine='duckdb' needs the [online] extra: {_ONLINE_EXTRA} ({exc})"
            ) from None
        backend = ibis.duckdb.connect()
        # Timestamps without a zone are read as UTC, as on Spark (spark.sql.session.timeZone),
        # not in this machine's zone: one log, the same instants on both engines.
        backend.raw_sql("SET TimeZone = 'UTC'")
        # DuckDB draws a progress bar on stderr for queries over 2 s: rankmeter's stderr
        # holds its own diagnostics (one error line) only.
        backend.raw_sql("SET enable_progress_bar = false")
        return backend
    return _spark(spark_master or "local[2]", dict(spark_conf or {}))


def _spark(master: str, conf: dict[str, str]) -> Any:
    for setting, value in conf.items():
        if not isinstance(setting, str) or not isinstance(value, str):
            raise PolicyError(
                f"spark_conf must map setting names to text values, got {setting!r}: {value!r}"
            )
    key = (master, tuple(sorted(conf.items())))
    with _spark_lock:
        if _spark_backend:
            (started, backend) = _spark_backend[0]
            if started != key:
                # Spark allows one session per process; a second master or other settings
                # would silently be ignored by getOrCreate.
                raise PolicyError(
                    f"a Spark session (master {started[0]!r}, settings {dict(started[1])}) "
                    f"already runs in this process: Spark allows one, so master {master!r} "
                    f"with settings {conf} cannot start; use the same master and settings"
                )
            return backend
        ibis = _ibis()
        try:
            from pyspark.sql import SparkSession
        except ImportError as exc:
            raise PolicyError(
                f"engine='spark' needs the [spark] extra: {_SPARK_EXTRA} ({exc})"
            ) from None
        if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            raise PolicyError(
                "engine='spark' needs Java 17 (a JVM runs Spark): install it (Debian: "
                "apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
            )
        # The workers must run this interpreter (the one with rankmeter's dependencies).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        builder = (
            SparkSession.builder.master(master)
            .appName("rankmeter")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={_log4j2()}")
        )
        for name, value in conf.items():
            builder = builder.config(name, value)
        session = _quietly(builder.getOrCreate)
        backend = ibis.pyspark.connect(session)
        _spark_backend.append((key, backend))
        return backend


def _log4j2() -> str:
    """A file URI of :data:`_LOG4J2_PROPERTIES` (written once per process, in the temp folder)."""
    import tempfile
    from pathlib import Path

    handle, name = tempfile.mkstemp(prefix="rankmeter-log4j2-", suffix=".properties")
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        file.write(_LOG4J2_PROPERTIES)
    return Path(name).as_uri()


def _quietly(start: Any) -> Any:
    """``start()`` (the Spark session's start) with the JVM's stderr passed through a filter
    that drops :data:`_JVM_START_NOISE`: PySpark starts the JVM with this process's stderr,
    and the JVM prints its incubator-module warning there before any logging is set up."""
    try:
        sys.stderr.flush()
        original = os.dup(2)
        read_end, write_end = os.pipe()
    except (OSError, ValueError):  # no stderr descriptor to filter (an embedding host)
        return start()
    threading.Thread(
        target=_forward, args=(read_end, original), name="rankmeter-spark-stderr", daemon=True
    ).start()
    os.dup2(write_end, 2)
    try:
        return start()
    finally:
        sys.stderr.flush()
        os.dup2(original, 2)
        os.close(write_end)  # the JVM holds the pipe now: it ends when the JVM does


def _forward(read_end: int, target: int) -> None:
    """Copy lines from ``read_end`` to ``target`` but the JVM's start-up noise."""
    with os.fdopen(read_end, "rb") as lines:
        for line in lines:
            if not line.startswith(_JVM_START_NOISE):
                try:
                    os.write(target, line)
                except OSError:
                    return


def engine_name(backend: Any) -> str:
    """``"duckdb"`` or ``"spark"``: which engine an Ibis backend is (its ``name``)."""
    name = str(getattr(backend, "name", ""))
    return "spark" if name == "pyspark" else name
