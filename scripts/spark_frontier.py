#!/usr/bin/env python3
"""A crawler frontier on Spark: cut a batch of URLs down to those never
admitted before, with the history kept as a Parquet table of fingerprints.

Usage (with the environment scripts/python-env made):

    .venv/bin/python scripts/spark_frontier.py BATCH HISTORY OUTPUT [--rung R]
        [--preset P] [--with T]... [--without T]... [--key canonical|surt]
        [--master URL] [--single-file]

BATCH is a text file (or a directory of them), one URI a line, read as
`urinorm dedup` reads it. HISTORY is a directory of Parquet files with one
column, `fingerprint` (16 bytes: urinorm's stable fingerprint of each key
ever admitted); it is created on the first run. OUTPUT is a directory Spark
writes (replaced): text part files holding, once each, the keys of the batch
that HISTORY does not hold. Their fingerprints are then appended to HISTORY,
so running the same batch again writes nothing. The same rung and options
must be used every time: keys made otherwise are not comparable.

The fingerprints are the bytes `urinorm.fingerprint` gives (XXH3-128 of the
key, big-endian), the bytes urinorm's own seen store keeps.
"""

import argparse
import importlib.util
import sys
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, StructField, StructType

from urinorm.spark import fingerprint_col, normalize_col

HISTORY_SCHEMA = StructType([StructField("fingerprint", BinaryType(), nullable=False)])


def _spark_dedup():
    """scripts/spark_dedup.py, whose way of reading a URL list and whose
    options this script shares."""
    path = Path(__file__).resolve().parent / "spark_dedup.py"
    spec = importlib.util.spec_from_file_location("spark_dedup", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def history(spark: SparkSession, path: str) -> DataFrame:
    """The fingerprints admitted so far: none before the first run."""
    if not Path(path).exists():
        return spark.createDataFrame([], HISTORY_SCHEMA)
    return spark.read.schema(HISTORY_SCHEMA).parquet(path)


def admit(
    spark: SparkSession,
    batch: str,
    history_path: str,
    destination: str,
    single_file: bool = False,
    **options,
) -> dict:
    """Writes the keys of `batch` never admitted before to `destination`,
    appends their fingerprints to the history, and returns the counts
    (lines, new, duplicates within the batch, seen before, rejected).
    `options` are those of :func:`urinorm.spark.normalize_col`."""
    read_lines = _spark_dedup().read_lines
    keyed = (
        read_lines(spark, batch)
        .withColumn("key", normalize_col("url", **options))
        .withColumn("fingerprint", fingerprint_col("url", **options))
        .filter(F.col("key").isNotNull())
    )
    distinct = keyed.dropDuplicates(["fingerprint"]).select("key", "fingerprint")
    # Computed once, before the history changes under the plan.
    new = distinct.join(history(spark, history_path), "fingerprint", "left_anti").localCheckpoint()
    keys = new.select("key")
    if single_file:
        keys = keys.coalesce(1)
    keys.write.mode("overwrite").text(destination)
    new.select("fingerprint").write.mode("append").parquet(history_path)

    lines = read_lines(spark, batch).count()
    accepted, unique, admitted = keyed.count(), distinct.count(), new.count()
    return {
        "lines": lines,
        "new": admitted,
        "duplicates": accepted - unique,
        "seen": unique - admitted,
        "rejected": lines - accepted,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Cut a batch of URLs down to those never admitted before (Spark)."
    )
    parser.add_argument("batch", help="a text file, or a directory of them, one URI a line")
    parser.add_argument("history", help="the Parquet directory of admitted fingerprints")
    parser.add_argument("output", help="the directory to write the new keys to (replaced)")
    shared = _spark_dedup()
    shared.add_key_options(parser)
    args = parser.parse_args(argv)

    spark = shared.session("urinorm frontier", args.master)
    try:
        counts = admit(
            spark,
            args.batch,
            args.history,
            args.output,
            single_file=args.single_file,
            **shared.key_options(args),
        )
    finally:
        spark.stop()
    print(
        "spark_frontier: {lines} lines read = {new} new + {duplicates} duplicates"
        " + {seen} seen + {rejected} rejected".format(**counts),
        file=sys.stderr,
    )
    return 1 if counts["rejected"] else 0


if __name__ == "__main__":
    sys.exit(main())
