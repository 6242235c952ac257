"""The loadable extension against the Python Arrow UDF, DuckDB's own
lower() and normalize_batch, on N rows (default 1,000,000: the sample
repeated) in a DuckDB table t(url VARCHAR).

    .venv/bin/python duckdb-ext/bench.py EXTENSION [--rows N] [--runs R]

Each figure is the median of R runs (default 7), every candidate run once a
round, in one process. A query's result is materialized as an Arrow table.
"""

import argparse
import statistics
import time
from pathlib import Path

import duckdb
import pyarrow as pa

import urinorm
import urinorm.duckdb

SAMPLE = Path(__file__).resolve().parents[1] / "testdata" / "sample" / "urls.txt"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("extension")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    text = SAMPLE.read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    lines = [line for line in text.splitlines() if line]
    urls = (lines * (args.rows // len(lines) + 1))[: args.rows]
    array = pa.array(urls, pa.string())

    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{args.extension}'")
    urinorm.duckdb.register(con, prefix="udf_")
    con.register("src", pa.table({"url": array}))
    con.execute("CREATE TABLE t AS SELECT url FROM src")
    con.unregister("src")

    def query(threads, sql):
        def run():
            con.execute(f"SET threads={threads}")
            return con.sql(sql).to_arrow_table()
        return run

    candidates = {}
    for threads in (1, 2):
        candidates[f"extension urinorm_normalize, DuckDB threads={threads}"] = query(threads, "SELECT urinorm_normalize(url) FROM t")
        candidates[f"Python Arrow UDF, DuckDB threads={threads}"] = query(threads, "SELECT udf_normalize(url) FROM t")
        candidates[f"lower(url), DuckDB threads={threads}"] = query(threads, "SELECT lower(url) FROM t")
        candidates[f"url (scan only), DuckDB threads={threads}"] = query(threads, "SELECT url FROM t")
    candidates["normalize_batch(array, threads=1)"] = lambda: urinorm.normalize_batch(array, threads=1)
    candidates["normalize_batch(array, threads=2)"] = lambda: urinorm.normalize_batch(array, threads=2)

    # The extension and the batch agree before anything is timed.
    got = con.sql("SELECT urinorm_normalize(url) AS k FROM t").to_arrow_table().column("k").combine_chunks()
    assert got.equals(urinorm.normalize_batch(array)[0].cast(got.type))

    times = {name: [] for name in candidates}
    for _ in range(args.runs):
        for name, run in candidates.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(t) for name, t in times.items()}
    batch2 = medians["normalize_batch(array, threads=2)"]
    print(f"{args.rows:,} rows, median of {args.runs}; ratio = throughput / normalize_batch(threads=2)'s\n")
    print("| candidate | ms | Mrows/s | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for name, median in medians.items():
        spread = f"{min(times[name]) * 1e3:.0f}-{max(times[name]) * 1e3:.0f}"
        print(f"| {name} | {median * 1e3:.0f} ({spread}) | {args.rows / median / 1e6:.2f} | {batch2 / median:.2f} |")


if __name__ == "__main__":
    main()
