#!/usr/bin/env python3
"""A crawler frontier on Spark: cut a batch of URLs down to those never
admitted before (or admitted too long ago), with the history kept as a
Parquet table that urinorm's seen store exports and imports.

Usage (with the environment scripts/python-env made):

    .venv/bin/python scripts/spark_frontier.py BATCH HISTORY OUTPUT [--rung R]
        [--preset P] [--with T]... [--without T]... [--key canonical|surt]
        [--seen-max-age DURATION] [--now TIME] [--master URL] [--single-file]

BATCH is a text file (or a directory of them), one URI a line, read as
`urinorm dedup` reads it. HISTORY is a directory of Parquet files, the
layout `urinorm seen export` writes and `urinorm seen import` reads:
`fingerprint` (16 bytes: urinorm's stable fingerprint of each key
admitted) and `admitted` (when, UTC; rows of a history written before
times were kept have none, and never expire), with `_urinorm.json`, the key
configuration its keys were made with (`urinorm.seen_config`). It is
created on the first run; a history whose configuration is not the one
these options give is refused, since keys made otherwise are not
comparable. OUTPUT is a directory Spark writes (replaced): text part files
holding, once each, the keys of the batch that HISTORY does not hold. Their
fingerprints are then appended to HISTORY with this run's time (or --now's,
an RFC 3339 time), so running the same batch again writes nothing. With
--seen-max-age (7d, 12h, 1h30m), a key admitted longer ago counts as not
held: written again and admitted again with this run's time (counted as
expired), as `dedup --seen-max-age` does.

The fingerprints are the bytes `urinorm.fingerprint` gives (XXH3-128 of the
key, big-endian), the bytes urinorm's own seen store keeps. A store takes
only what a crawler fetches (http, https, ftp, ftps, ws and wss URIs with
a host); this job keys every URI reference, and the keys of those URIs are
the same.
"""

import argparse
import importlib.util
import json
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, StructField, StructType, TimestampType

import urinorm
from urinorm.spark import fingerprint_col, normalize_col

HISTORY_SCHEMA = StructType(
    [
        StructField("fingerprint", BinaryType(), nullable=False),
        StructField("admitted", TimestampType(), nullable=True),
    ]
)
#: The file beside a history's Parquet files that records its keys'
#: configuration (Spark skips files whose names start with `_`).
CONFIG_FILE = "_urinorm.json"


def _spark_dedup():
    """scripts/spark_dedup.py, whose way of reading a URL list and whose
    options this script shares."""
    path = Path(__file__).resolve().parent / "spark_dedup.py"
    spec = importlib.util.spec_from_file_location("spark_dedup", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def history(spark: SparkSession, path: str) -> DataFrame:
    """The rows admitted so far: none before the first run."""
    if not Path(path).exists():
        return spark.createDataFrame([], HISTORY_SCHEMA)
    return spark.read.schema(HISTORY_SCHEMA).parquet(path)


def check_config(history_path: str, wanted: dict) -> None:
    """Refuses a history whose keys were made with other settings."""
    path = Path(history_path) / CONFIG_FILE
    if not path.exists():
        return
    recorded = json.loads(path.read_text())["config"]
    if recorded != wanted:
        differing = sorted(
            name for name in recorded.keys() | wanted.keys() if recorded.get(name) != wanted.get(name)
        )
        raise ValueError(
            f"the history {history_path} holds keys made with other settings"
            f" ({', '.join(differing)}) than this run's: keys made differently"
            " cannot be compared (use the history's options, or another history)"
        )


def record_config(history_path: str, wanted: dict) -> None:
    """Writes the history's `_urinorm.json`, when it has none."""
    path = Path(history_path) / CONFIG_FILE
    if not path.exists():
        about = {"format": 1, "config": wanted, "written_by": "scripts/spark_frontier.py"}
        path.write_text(json.dumps(about))


def admit(
    spark: SparkSession,
    batch: str,
    history_path: str,
    destination: str,
    single_file: bool = False,
    max_age: timedelta | None = None,
    now: datetime | None = None,
    **options,
) -> dict:
    """Writes the keys of `batch` not admitted before (or, with `max_age`,
    admitted longer ago) to `destination`, appends their fingerprints to
    the history with the time `now` (by default, the clock's), and returns
    the counts (lines, new, duplicates within the batch, seen before,
    expired, rejected). `options` are those of
    :func:`urinorm.spark.normalize_col`."""
    now = now or datetime.now(timezone.utc)
    config_options = {k: v for k, v in options.items() if k != "lenient"}
    wanted = urinorm.seen_config(**config_options)
    check_config(history_path, wanted)
    # Times as the store keeps them: microseconds since the epoch, UTC.
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    read_lines = _spark_dedup().read_lines
    keyed = (
        read_lines(spark, batch)
        .withColumn("key", normalize_col("url", **options))
        .withColumn("fingerprint", fingerprint_col("url", **options))
        .filter(F.col("key").isNotNull())
    )
    distinct = keyed.dropDuplicates(["fingerprint"]).select("key", "fingerprint")
    # A key's latest row decides; one with no time never expires.
    latest = history(spark, history_path).groupBy("fingerprint").agg(
        F.max("admitted").alias("admitted")
    )
    if max_age is not None:
        cutoff = F.lit(now - max_age).cast(TimestampType())
        expired = latest.filter(F.col("admitted") < cutoff)
        held = latest.filter(F.col("admitted").isNull() | (F.col("admitted") >= cutoff))
    else:
        expired, held = latest.limit(0), latest
    # Computed once, before the history changes under the plan.
    new = distinct.join(held, "fingerprint", "left_anti").localCheckpoint()
    renewed = new.join(expired, "fingerprint", "left_semi").count()
    keys = new.select("key")
    if single_file:
        keys = keys.coalesce(1)
    keys.write.mode("overwrite").text(destination)
    admitted_at = F.lit(now).cast(TimestampType()).alias("admitted")
    new.select("fingerprint", admitted_at).write.mode("append").parquet(history_path)
    record_config(history_path, wanted)

    lines = read_lines(spark, batch).count()
    accepted, unique, admitted = keyed.count(), distinct.count(), new.count()
    return {
        "lines": lines,
        "new": admitted - renewed,
        "duplicates": accepted - unique,
        "seen": unique - admitted,
        "expired": renewed,
        "rejected": lines - accepted,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Cut a batch of URLs down to those never admitted before (Spark)."
    )
    parser.add_argument("batch", help="a text file, or a directory of them, one URI a line")
    parser.add_argument("history", help="the Parquet directory of admitted fingerprints")
    parser.add_argument("output", help="the directory to write the new keys to (replaced)")
    parser.add_argument(
        "--seen-max-age",
        metavar="DURATION",
        help="a key admitted longer ago (7d, 12h, 1h30m) counts as not held: admitted again",
    )
    parser.add_argument("--now", metavar="TIME", help="the time to admit at (RFC 3339), for replays")
    shared = _spark_dedup()
    shared.add_key_options(parser)
    args = parser.parse_args(argv)
    max_age = None
    if args.seen_max_age is not None:
        max_age = timedelta(seconds=urinorm.parse_duration(args.seen_max_age))
    now = datetime.fromisoformat(args.now) if args.now else None

    spark = shared.session("urinorm frontier", args.master)
    try:
        counts = admit(
            spark,
            args.batch,
            args.history,
            args.output,
            single_file=args.single_file,
            max_age=max_age,
            now=now,
            **shared.key_options(args),
        )
    finally:
        spark.stop()
    print(
        "spark_frontier: {lines} lines read = {new} new + {expired} expired + {duplicates}"
        " duplicates + {seen} seen + {rejected} rejected".format(**counts),
        file=sys.stderr,
    )
    return 1 if counts["rejected"] else 0


if __name__ == "__main__":
    sys.exit(main())
