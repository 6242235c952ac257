"""PySpark in local mode: the dedup job of urinorm.spark gives what
`urinorm dedup` gives, with either kind of vectorized UDF, and so does
scripts/spark_dedup.py."""

import importlib.util
import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone

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


# The sample has no two lines with one key at the scheme rung, so these
# spellings of three URIs are added: without them dropDuplicates would only
# fold the null keys. Case of scheme and host, percent-encoded unreserved
# characters and dot segments (§6.2.2); default and empty ports, and the
# empty path (§6.2.3).
VARIANTS = [
    "http://example.com/a",
    "HTTP://Example.COM:80/a",
    "http://example.com/%61",
    "http://EXAMPLE.com:/a",
    "https://example.com:443/",
    "https://example.com",
    "http://example.com/~",
    "http://example.com/%7e",
    "http://example.com/./b/../%7E",
]
VARIANT_KEYS = ["http://example.com/a", "https://example.com/", "http://example.com/~"]
# The counts of `urinorm dedup --rung scheme` on the sample and VARIANTS.
LINES = 5009  # 5,000 of the sample and the 9 variants
REJECTED = 17  # lines of the sample that are not URIs
UNIQUE = 4986  # the sample's 4,983 distinct keys and VARIANT_KEYS
DUPLICATES = 6  # the variants that merged into the first of their URI


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """The sample followed by VARIANTS, one a line."""
    path = tmp_path_factory.mktemp("spark") / "urls.txt"
    path.write_bytes(SAMPLE.read_bytes() + "".join(v + "\n" for v in VARIANTS).encode())
    return path


@pytest.fixture(scope="module")
def cli_dedup(cli, source):
    """What `urinorm dedup SOURCE --rung scheme` writes, one key a line."""
    done = subprocess.run(
        [cli, "dedup", "--quiet", "--rung", "scheme", source],
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1  # REJECTED lines are not URIs
    keys = done.stdout.splitlines()
    # The variants merged: into one key per URI, each written once.
    assert len(keys) == UNIQUE
    assert [keys.count(k) for k in VARIANT_KEYS] == [1, 1, 1]
    return keys


@pytest.mark.parametrize("udf", ["arrow", "pandas"])
def test_the_one_line_dedup_job(spark, source, cli_dedup, udf):
    df = spark.read.text(str(source)).withColumnRenamed("value", "url")
    assert df.count() == LINES

    deduped = df.withColumn(
        "canonical", normalize_col("url", rung="scheme", udf=udf)
    ).dropDuplicates(["canonical"])
    # The lines that are not URIs share the null key: one row among the distinct ones.
    keys = [row.canonical for row in deduped.select("canonical").collect()]
    assert keys.count(None) == 1
    assert len(keys) - 1 == len(cli_dedup) == UNIQUE
    # What was dropped: the variants that merged, and all nulls but one.
    assert LINES - len(keys) == DUPLICATES + REJECTED - 1
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


@pytest.mark.parametrize("udf", ["arrow", "pandas"])
def test_lenient_and_a_resolve_column_for_link_datasets(spark, udf):
    from urinorm.spark import resolve_col

    pages = ["http://t.example/a?title=[x]y", "http://a/b/c", None, "http://a/"]
    hrefs = ["z", " ../d ", "/x", "x y"]
    df = spark.createDataFrame(list(zip(range(4), pages, hrefs)), "i int, page string, href string")
    rows = df.select(
        "i",
        resolve_col("page", "href", udf=udf, lenient=True).alias("lenient"),
        resolve_col("page", "href", udf=udf).alias("strict"),
        normalize_col("href", udf=udf, lenient=True).alias("href"),
    ).orderBy("i").collect()
    lenient, _ = urinorm.resolve_batch(pages, hrefs, lenient=True)
    strict, _ = urinorm.resolve_batch(pages, hrefs)
    assert [r.lenient for r in rows] == lenient.to_pylist() == ["http://t.example/z", "http://a/d", None, "http://a/x%20y"]
    assert [r.strict for r in rows] == strict.to_pylist()
    assert [r.href for r in rows] == urinorm.normalize_batch(hrefs, lenient=True)[0].to_pylist()


def test_bad_options_fail_on_the_driver():
    with pytest.raises(ValueError, match="unknown transform 'nope'"):
        normalize_col("url", with_="nope")
    with pytest.raises(ValueError, match="unknown key 'cdx'"):
        normalize_col("url", key="cdx")
    with pytest.raises(ValueError, match="unknown udf 'rdd'"):
        normalize_col("url", udf="rdd")


def test_the_example_script(spark, source, cli_dedup, tmp_path):
    path = ROOT / "scripts" / "spark_dedup.py"
    spec = importlib.util.spec_from_file_location("spark_dedup", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)

    # CRLF endings and blank lines, read as urinorm reads them.
    crlf = tmp_path / "urls.txt"
    crlf.write_bytes(source.read_bytes().replace(b"\n", b"\r\n\r\n"))
    counts = script.dedup(spark, str(crlf), str(tmp_path / "out"), single_file=True, rung="scheme")
    assert counts == {
        "lines": LINES,
        "unique": UNIQUE,
        "duplicates": DUPLICATES,
        "rejected": REJECTED,
    }
    (part,) = (tmp_path / "out").glob("part-*")
    assert sorted(part.read_text().splitlines()) == sorted(cli_dedup)


def _load_script(name: str):
    path = ROOT / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_the_frontier_script_admits_each_key_once_across_batches(spark, cli, sample, tmp_path):
    """Two overlapping batches: the second writes its keys less the first's,
    a rerun writes nothing, and the history holds each key's fingerprint."""
    script = _load_script("spark_frontier")
    lines = [line for _, line in sample]
    first = tmp_path / "first.txt"
    first.write_text("".join(line + "\n" for line in lines[:3000]))
    second = tmp_path / "second.txt"
    second.write_text("".join(line + "\n" for line in lines[2000:] + VARIANTS))

    def cli_keys(path) -> set:
        done = subprocess.run(
            [cli, "dedup", "--quiet", "--rung", "scheme", path], capture_output=True, text=True
        )
        assert done.returncode in (0, 1), done.stderr
        return set(done.stdout.splitlines())

    def admitted(out) -> set:
        return {key for part in out.glob("part-*") for key in part.read_text().splitlines()}

    history = str(tmp_path / "history")
    first_keys, second_keys = cli_keys(first), cli_keys(second)
    counts = script.admit(spark, str(first), history, str(tmp_path / "out1"), rung="scheme")
    assert admitted(tmp_path / "out1") == first_keys
    assert counts["new"] == len(first_keys) and counts["seen"] == 0

    counts = script.admit(spark, str(second), history, str(tmp_path / "out2"), rung="scheme")
    assert admitted(tmp_path / "out2") == second_keys - first_keys
    assert counts["seen"] == len(second_keys & first_keys) > 0
    assert counts["duplicates"] == DUPLICATES
    assert counts["lines"] == counts["new"] + counts["duplicates"] + counts["seen"] + counts["rejected"]

    counts = script.admit(spark, str(second), history, str(tmp_path / "out3"), rung="scheme")
    assert counts["new"] == 0 and admitted(tmp_path / "out3") == set()

    # The history is the fingerprints of every key admitted, as urinorm makes them.
    stored = {bytes(row.fingerprint) for row in spark.read.parquet(history).collect()}
    assert stored == {urinorm.fingerprint(key) for key in first_keys | second_keys}


@pytest.mark.parametrize("udf", ["arrow", "pandas"])
def test_fingerprint_col_gives_fingerprint_bytes(spark, udf):
    from urinorm.spark import fingerprint_col

    values = ["HTTP://Example.com:80/", "http://a b/", None, "http://example.com/%7e"]
    df = spark.createDataFrame([(v,) for v in values], "url string")
    rows = df.select("url", fingerprint_col("url", udf=udf).alias("print")).collect()
    expected = {v: urinorm.fingerprint(v) for v in values if v and " " not in v}
    assert {r.url: (bytes(r.print) if r.print is not None else None) for r in rows} == {
        v: expected.get(v) for v in values
    }


RULED = [
    "http://www.amazon.com/dp/1?ref=x&pf_rd_p=2&q=1",
    "http://shop.example/item?id=7&color=red",
    "http://a.store.example/ref=abc/p?tag=1&k=2&ref_=3",
    "http://x.exempt.example/?spm=2&a=3",
    "http://example.org/?ref=1",
    "not a uri",
    None,
]


@pytest.mark.parametrize("udf", ["arrow", "pandas"])
def test_site_rules_reach_the_executors_as_texts(spark, tmp_path, udf):
    """The rules files are read on the driver: the tasks run after the files
    are gone, and give what normalize_batch gives with them."""
    from urinorm.spark import fingerprint_col

    rules_dir = ROOT / "testdata" / "rules"
    site, clearurls = tmp_path / "site.rules", tmp_path / "clearurls.json"
    site.write_bytes((rules_dir / "site.rules").read_bytes())
    clearurls.write_bytes((rules_dir / "clearurls.json").read_bytes())
    options = {"rules": site, "rules_clearurls": [clearurls], "key": "canonical"}
    expected, _ = urinorm.normalize_batch(RULED, **options)
    prints = urinorm.fingerprint_batch(RULED, **options)
    assert expected.to_pylist()[:3] == [
        "http://www.amazon.com/dp/1?q=1",
        "http://shop.example/item?id=7",
        "http://a.store.example/p?k=2",
    ]

    df = spark.createDataFrame([(v,) for v in RULED], "url string")
    keys = normalize_col("url", udf=udf, **options)
    fingerprints = fingerprint_col("url", udf=udf, **options)
    site.unlink()
    clearurls.unlink()
    rows = df.select("url", keys.alias("key"), fingerprints.alias("print")).collect()
    assert {r.url: r.key for r in rows} == dict(zip(RULED, expected.to_pylist()))
    assert {r.url: (bytes(r.print) if r.print else None) for r in rows} == dict(
        zip(RULED, prints.to_pylist())
    )


def test_rules_errors_fail_on_the_driver(tmp_path):
    bad = tmp_path / "bad.rules"
    bad.write_text("a.com drop-params ref\na.com frobnicate\n")
    with pytest.raises(urinorm.RulesError, match="bad.rules:2: unknown action 'frobnicate'"):
        normalize_col("url", rules=bad)
    with pytest.raises(FileNotFoundError, match="missing.json"):
        normalize_col("url", rules_clearurls=tmp_path / "missing.json")
    with pytest.raises(ValueError, match="need the protocol rung, not the scheme rung"):
        normalize_col("url", rung="scheme", rules=tmp_path / "missing.rules")


def test_the_frontier_and_the_store_share_one_history(spark, cli, sample, tmp_path):
    """A store's export is the Spark frontier's history: the job applies
    --seen-max-age to the store's times, appends rows a store imports back,
    and the store then holds every key either admitted, with the Spark
    job's time for those it renewed."""
    script = _load_script("spark_frontier")
    lines = [line for _, line in sample]
    first = tmp_path / "first.txt"
    first.write_text("".join(line + "\n" for line in lines[:3000]))
    second = tmp_path / "second.txt"
    second.write_text("".join(line + "\n" for line in lines[2000:]))
    store, history = tmp_path / "store", tmp_path / "history"

    def run(*args):
        done = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
        assert done.returncode in (0, 1), done.stderr
        return done

    run("seen", "add", "-q", "--rung", "scheme", "--now", "2026-11-01T00:00:00Z", store, first)
    run("seen", "export", store, "-o", history)
    # Ten days on, with a week's age: the first batch's keys are expired.
    day_ten = datetime(2026, 11, 11, tzinfo=timezone.utc)
    counts = script.admit(
        spark,
        str(second),
        str(history),
        str(tmp_path / "out"),
        rung="scheme",
        max_age=timedelta(days=7),
        now=day_ten,
    )
    overlap = {
        urinorm.normalize(line, rung="scheme") for line in lines[2000:3000] if _fetchable(line)
    }
    assert counts["seen"] == 0
    assert counts["expired"] == len(overlap) > 0
    # The same batch again, a day later: all held now.
    again = script.admit(
        spark,
        str(second),
        str(history),
        str(tmp_path / "out2"),
        rung="scheme",
        max_age=timedelta(days=7),
        now=day_ten + timedelta(days=1),
    )
    assert again["new"] == again["expired"] == 0
    # Other key options are refused by the history.
    with pytest.raises(ValueError, match="other settings"):
        script.admit(spark, str(second), str(history), str(tmp_path / "out3"), rung="syntax")

    before = json.loads(run("seen", "stats", "--json", store).stdout)["keys"]
    imported = run("seen", "import", store, history)
    after = json.loads(run("seen", "stats", "--json", store).stdout)["keys"]
    assert after == before + counts["new"], imported.stdout
    assert f"{counts['expired']} renewed with a later time" in imported.stdout
    # Renewed on day ten: on day twelve, with a week's age, held.
    held = run(
        "dedup", "-q", "--rung", "scheme", "--seen", store, "--seen-readonly",
        "--seen-max-age", "7d", "--now", "2026-11-13T00:00:00Z", "--emit", "verdict", second,
    )  # fmt: skip
    verdicts = [line.split("\t")[0] for line in held.stdout.splitlines()]
    assert "expired" not in verdicts and "new" not in verdicts


def _fetchable(line: str) -> bool:
    """Whether a seen store takes `line`: an http(s) URI with a host (the
    sample's lines are of those schemes or relative)."""
    try:
        key = urinorm.normalize(line, rung="scheme")
    except urinorm.InvalidUri:
        return False
    return key.startswith(("http://", "https://")) and not key.startswith(("http:///", "https:///"))
