#!/usr/bin/env python3
"""Deduplicate a text file of URLs on Spark with urinorm's normalizer.

Usage (with the environment scripts/python-env made):

    .venv/bin/python scripts/spark_dedup.py INPUT OUTPUT [--rung R] [--preset P]
        [--with T]... [--without T]... [--key canonical|surt] [--master URL] [--single-file]

INPUT is a text file (or a directory of them) with one URI a line, read as
`urinorm dedup` reads it: LF or CRLF endings, a leading BOM ignored, blank
lines skipped. OUTPUT is a directory Spark writes: text part files holding
each distinct key once (in no particular order), the key being the canonical
form at the rung, or its SURT key. Lines that are not URI references have no
key and are counted as rejected; `urinorm normalize` on them says why. The
master is local (every core of this machine) unless --master names another.
The counts are printed on standard error as `urinorm dedup` prints them.
"""

import argparse
import os
import sys

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from urinorm.spark import normalize_col


def read_lines(spark: SparkSession, source: str) -> DataFrame:
    """The non-blank lines of `source`, as a column `url`."""
    # Spark's own separator would also split at a lone CR, which urinorm
    # keeps in the line (and rejects); the reader drops a leading BOM itself.
    lines = spark.read.option("lineSep", "\n").text(source)
    url = F.regexp_replace("value", "\r$", "")
    return lines.select(url.alias("url")).filter(F.col("url") != "")


def dedup(
    spark: SparkSession, source: str, destination: str, single_file: bool = False, **options
) -> dict:
    """Writes the distinct keys of `source`'s lines to the directory
    `destination`; returns the counts (lines, unique, duplicates, rejected).
    `options` are those of :func:`urinorm.spark.normalize_col`."""
    keyed = read_lines(spark, source).withColumn("canonical", normalize_col("url", **options))
    unique = keyed.filter(F.col("canonical").isNotNull()).dropDuplicates(["canonical"])
    keys = unique.select("canonical")
    if single_file:
        keys = keys.coalesce(1)
    keys.write.mode("overwrite").text(destination)

    counts = keyed.agg(F.count("*").alias("lines"), F.count("canonical").alias("accepted")).first()
    written = spark.read.text(destination).count()
    return {
        "lines": counts["lines"],
        "unique": written,
        "duplicates": counts["accepted"] - written,
        "rejected": counts["lines"] - counts["accepted"],
    }


def add_key_options(parser: argparse.ArgumentParser) -> None:
    """The options that make a key, and where Spark runs: shared with
    scripts/spark_frontier.py."""
    parser.add_argument("--rung", choices=["string", "syntax", "scheme", "protocol"])
    parser.add_argument("--preset", choices=["safe", "aggressive"])
    parser.add_argument("--with", dest="with_", action="append", default=[], metavar="TRANSFORM")
    parser.add_argument("--without", action="append", default=[], metavar="TRANSFORM")
    parser.add_argument("--key", choices=["canonical", "surt"], default="canonical")
    parser.add_argument("--master", default="local[*]", help="the Spark master (default: local[*])")
    parser.add_argument("--single-file", action="store_true", help="write one part file")


def key_options(args: argparse.Namespace) -> dict:
    """The options of :func:`urinorm.spark.normalize_col` the arguments give."""
    return {
        "rung": args.rung,
        "preset": args.preset,
        "with_": args.with_,
        "without": args.without,
        "key": args.key,
    }


def session(app: str, master: str) -> SparkSession:
    """A Spark session; a local one runs its workers in this interpreter,
    which has urinorm, and listens on the loopback interface only."""
    builder = SparkSession.builder.appName(app).master(master)
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config(
            "spark.driver.host", "127.0.0.1"
        )
    return builder.getOrCreate()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Deduplicate a text file of URLs on Spark with urinorm's normalizer."
    )
    parser.add_argument("input", help="a text file, or a directory of them, one URI a line")
    parser.add_argument("output", help="the directory to write the distinct keys to (replaced)")
    add_key_options(parser)
    args = parser.parse_args(argv)

    spark = session("urinorm dedup", args.master)
    try:
        counts = dedup(
            spark, args.input, args.output, single_file=args.single_file, **key_options(args)
        )
    finally:
        spark.stop()
    print(
        "spark_dedup: {lines} lines read = {unique} unique + {duplicates} duplicates"
        " + {rejected} rejected".format(**counts),
        file=sys.stderr,
    )
    return 1 if counts["rejected"] else 0


if __name__ == "__main__":
    sys.exit(main())
