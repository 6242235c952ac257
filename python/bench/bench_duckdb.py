"""urinorm's DuckDB functions against the raw Arrow batch: the extension's
``urinorm_normalize`` and the Python UDF's (:mod:`urinorm.duckdb`), with
DuckDB's own ``lower()`` and a bare scan for scale, against
``normalize_batch(threads=1)`` and ``normalize_batch(threads=2)``, on N
rows (default 1,000,000: the sample repeated) in a DuckDB table
``t(url VARCHAR)``.

Usage (from the repository root, after scripts/python-env --bench):

    .venv/bin/python python/bench/bench_duckdb.py [--rows N] [--runs R]

Each figure is the median of R runs (default 7), every candidate run once a
round, in one process, so that a busy moment of the machine falls on all
of them alike. A query's result is materialized as an Arrow table. The
goal (issue #39): the DuckDB function at least 0.8x the throughput of
``normalize_batch(threads=2)``. Prints a Markdown table.
"""

import argparse
import statistics
from pathlib import Path

import pyarrow as pa

import urinorm
import urinorm.duckdb
from bench_batch import alternating_runs

SAMPLE = Path(__file__).resolve().parents[2] / "testdata" / "sample" / "urls.txt"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows (default 1,000,000)")
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each (default 7)")
    args = parser.parse_args()

    text = SAMPLE.read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    lines = [line for line in text.splitlines() if line]
    urls = (lines * (args.rows // len(lines) + 1))[: args.rows]
    array = pa.array(urls, pa.string())

    con = urinorm.duckdb.connect()
    assert urinorm.duckdb.extension_loaded(con), "no extension: run scripts/python-env"
    assert urinorm.duckdb.register(con, prefix="udf_", extension=False) == "udf"
    con.register("src", pa.table({"url": array}))
    con.execute("CREATE TABLE t AS SELECT url FROM src")
    con.unregister("src")

    def query(threads: int, sql: str):
        def run():
            con.execute(f"SET threads={threads}")
            return con.sql(sql).to_arrow_table()

        return run

    candidates = {}
    for threads in (1, 2):
        candidates[f"extension `urinorm_normalize(url)`, DuckDB threads={threads}"] = query(
            threads, "SELECT urinorm_normalize(url) FROM t"
        )
        candidates[f"Python Arrow UDF `udf_normalize(url)`, DuckDB threads={threads}"] = query(
            threads, "SELECT udf_normalize(url) FROM t"
        )
        candidates[f"`lower(url)`, DuckDB threads={threads}"] = query(threads, "SELECT lower(url) FROM t")
        candidates[f"`url` (scan only), DuckDB threads={threads}"] = query(threads, "SELECT url FROM t")
    candidates["`normalize_batch(array, threads=1)`"] = lambda: urinorm.normalize_batch(array, threads=1)
    candidates["`normalize_batch(array, threads=2)`"] = lambda: urinorm.normalize_batch(array, threads=2)

    # The two routes and the batch agree before anything is timed.
    expected = urinorm.normalize_batch(array)[0]
    for function in ("urinorm_normalize", "udf_normalize"):
        got = con.sql(f"SELECT {function}(url) AS k FROM t").to_arrow_table().column("k")
        assert got.combine_chunks().equals(expected.cast(got.type)), function

    times = alternating_runs(candidates, args.runs)
    medians = {name: statistics.median(t) for name, t in times.items()}
    batch2 = medians["`normalize_batch(array, threads=2)`"]
    print(
        f"{args.rows:,} rows, median of {args.runs} alternating runs;"
        " ratio = throughput / `normalize_batch(threads=2)`'s (goal: the DuckDB function ≥ 0.8×)\n"
    )
    print("| candidate | ms (min-max) | Mrows/s | ratio |")
    print("|---|---:|---:|---:|")
    for name, median in medians.items():
        spread = f"{min(times[name]) * 1e3:.0f}-{max(times[name]) * 1e3:.0f}"
        print(
            f"| {name} | {median * 1e3:.0f} ({spread}) | {args.rows / median / 1e6:.2f} | "
            f"**{batch2 / median:.2f}×** |"
        )


if __name__ == "__main__":
    main()
