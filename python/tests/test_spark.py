"""PySpark in local mode: the dedup job of urinorm.spark gives what
`urinorm dedup` gives, with either kind of vectorized UDF, and so does
scripts/spark_dedup.py."""

import importlib.util
import os
import subprocess
import sys

import pytest
from pyspark.sql import SparkSession

import urinorm
from conftest import ROOT, SAMPLE
from urinorm.spark import normalize_col


@pytest.fixture(scope="module")
def spark():
    """One local session for the module: starting Spark takes seconds."""
    # The workers must be this interpreter, which has urinorm installed.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("urinorm tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def cli_dedup(cli):
    """What `urinorm dedup SAMPLE --rung scheme` writes, one key a line."""
    done = subprocess.run(
        [cli, "dedup", "--quiet", "--rung", "scheme", SAMPLE],
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1  # 17 lines are not URIs
    return done.stdout.splitlines()


@pytest.mark.parametrize("udf", ["arrow", "pandas"])
def test_the_one_line_dedup_job(spark, cli_dedup, udf):
    df = spark.read.text(str(SAMPLE)).withColumnRenamed("value", "url")
    assert df.count() == 5000

    deduped = df.withColumn(
        "canonical", normalize_col("url", rung="scheme", udf=udf)
    ).dropDuplicates(["canonical"])
    # The 17 lines that are not URIs share the null key: one row among the distinct ones.
    keys = [row.canonical for row in deduped.select("canonical").collect()]
    assert keys.count(None) == 1
    assert len(keys) - 1 == len(cli_dedup) == 4983
    assert sorted(k for k in keys if k is not None) == sorted(cli_dedup)


@pytest.mark.parametrize("udf", ["arrow", "pandas"])
def test_keys_are_those_of_normalize_batch(spark, sample, udf):
    options = {"preset": "aggressive", "without": "strip-www", "key": "surt"}
    rows = (
        spark.read.text(str(SAMPLE))
        .select("value", normalize_col("value", udf=udf, **options).alias("key"))
        .collect()
    )
    lines = [line for _, line in sample]
    expected, _ = urinorm.normalize_batch(lines, **options)
    assert {row.value: row.key for row in rows} == dict(zip(lines, expected.to_pylist()))


def test_bad_options_fail_on_the_driver():
    with pytest.raises(ValueError, match="unknown transform 'nope'"):
        normalize_col("url", with_="nope")
    with pytest.raises(ValueError, match="unknown key 'cdx'"):
        normalize_col("url", key="cdx")
    with pytest.raises(ValueError, match="unknown udf 'rdd'"):
        normalize_col("url", udf="rdd")


def test_the_example_script(spark, cli_dedup, tmp_path):
    path = ROOT / "scripts" / "spark_dedup.py"
    spec = importlib.util.spec_from_file_location("spark_dedup", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)

    # CRLF endings and blank lines, read as urinorm reads them.
    source = tmp_path / "urls.txt"
    source.write_bytes(SAMPLE.read_bytes().replace(b"\n", b"\r\n\r\n"))
    counts = script.dedup(
        spark, str(source), str(tmp_path / "out"), single_file=True, rung="scheme"
    )
    assert counts == {"lines": 5000, "unique": 4983, "duplicates": 0, "rejected": 17}
    (part,) = (tmp_path / "out").glob("part-*")
    assert sorted(part.read_text().splitlines()) == sorted(cli_dedup)
