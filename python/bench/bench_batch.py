"""The batch functions side by side: threads, dictionary columns, and a
link dataset resolved and normalized against urljoin + w3lib.

Usage (from the repository root):

    scripts/python-env --bench
    .venv/bin/python python/bench/bench_batch.py [--rows N] [--runs R]

Each figure is the median of R runs (default 7), measured in one process
with every candidate alternating run by run, so that a busy moment of the
machine falls on all of them alike (the median, not the best: a run whose
fresh buffers happen to get huge pages is much faster, and rare):

- ``normalize_batch`` on N rows (default 1,000,000: the shipped sample,
  5,000 real URLs, repeated) as a pyarrow string array, ``threads=1``
  against ``threads=2`` (the goal: at least 1.7× on two cores);
- the same rows as a dictionary column with 10 % distinct values
  (``dictionary_encode`` of a column made of N/10 distinct lines: each
  sample line with a distinct query), against the same values as a plain
  string column (the goal: at least 5×);
- DuckDB's ``urinorm_normalize`` (:mod:`urinorm.duckdb`) over the same
  rows as a table, on DuckDB's threads (one a core): the extension's and
  the Python UDF's, against ``normalize_batch`` with ``threads=2`` (the
  goal: at least 0.8× its throughput; ``bench_duckdb.py`` has more);
- the Polars expression ``urinorm.polars.normalize`` over the same rows as
  a frame, in the default engine (one call on the whole column) and in
  the streaming one (a call a morsel, on Polars' threads), against
  ``normalize_batch`` with ``threads=1`` and ``threads=2`` (the goal: at
  least 0.8× the raw batch's throughput);
- a link dataset of 200,000 ``(page, href)`` rows made from the sample
  (each line's path, a dot-relative path or the line itself, against the
  line before it): ``resolve_batch(..., lenient=True)`` against
  ``urllib.parse.urljoin`` then ``w3lib.url.canonicalize_url`` row by
  row, and against the same pair with ``preset="aggressive"``, the
  closest to w3lib's canonicalization.

Prints a Markdown table.
"""

import argparse
import statistics
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pyarrow as pa
import w3lib.url

import urinorm
import urinorm.duckdb
import urinorm.polars

SAMPLE = Path(__file__).resolve().parents[2] / "testdata" / "sample" / "urls.txt"


def sample_lines() -> list[str]:
    text = SAMPLE.read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    return [line for line in text.splitlines() if line]


def links(lines: list[str], rows: int) -> tuple[list[str], list[str]]:
    bases, references = [], []
    for i in range(rows):
        base, line = lines[i % len(lines)], lines[(i + 1) % len(lines)]
        path = "/" + line.split("/", 3)[3] if line.count("/") >= 3 else line
        references.append([line, path, "../" + path.rsplit("/", 1)[-1]][i % 3])
        bases.append(base)
    return bases, references


def w3lib_pipeline(bases: list[str], references: list[str]) -> int:
    failed = 0
    for base, reference in zip(bases, references):
        try:
            w3lib.url.canonicalize_url(urllib.parse.urljoin(base, reference))
        except Exception:  # noqa: BLE001 - a row w3lib raises on, counted
            failed += 1
    return failed


def alternating_runs(
    candidates: dict[str, Callable[[], object]], runs: int
) -> dict[str, list[float]]:
    """Each candidate's seconds in each of ``runs`` rounds, every candidate
    run once a round, so that a busy moment falls on all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(runs):
        for name, run in candidates.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows (default 1,000,000)")
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each (default 7)")
    args = parser.parse_args()

    lines = sample_lines()
    column = pa.array([lines[i % len(lines)] for i in range(args.rows)])
    distinct = args.rows // 10
    varied = [f"{lines[i % len(lines)]}#v{i % distinct}" for i in range(args.rows)]
    plain = pa.array(varied)
    dictionary = plain.dictionary_encode()
    bases, references = links(lines, 200_000)
    base_array, reference_array = pa.array(bases), pa.array(references)
    one, two = (
        urinorm.normalize_batch(column, threads=1)[0],
        urinorm.normalize_batch(column, threads=2)[0],
    )
    assert one.equals(two), "threads change nothing"

    con = urinorm.duckdb.connect()
    assert urinorm.duckdb.extension_loaded(con), "no extension: run scripts/python-env"
    urinorm.duckdb.register(con, prefix="udf_", extension=False)
    con.register("source", pa.table({"url": column}))
    con.sql("CREATE TABLE t AS SELECT * FROM source")

    frame = pl.DataFrame({"url": column})
    expression = urinorm.polars.normalize("url")
    assert frame.select(expression)["url"].to_arrow().cast(pa.string()).equals(one)
    lazy = frame.lazy().select(expression)

    candidates = {
        "duckdb": lambda: con.sql("SELECT urinorm_normalize(url) FROM t").to_arrow_table(),
        "duckdb, udf": lambda: con.sql("SELECT udf_normalize(url) FROM t").to_arrow_table(),
        "polars": lambda: frame.select(expression),
        "polars, streaming": lambda: lazy.collect(engine="streaming"),
        "threads=1": lambda: urinorm.normalize_batch(column, threads=1),
        "threads=2": lambda: urinorm.normalize_batch(column, threads=2),
        "plain column, 10 % distinct, threads=1": lambda: urinorm.normalize_batch(
            plain, threads=1
        ),
        "dictionary column, 10 % distinct, threads=1": lambda: urinorm.normalize_batch(
            dictionary, threads=1
        ),
        "resolve_batch, lenient, threads=1": lambda: urinorm.resolve_batch(
            base_array, reference_array, lenient=True, threads=1
        ),
        "resolve_batch, lenient, aggressive, threads=1": lambda: urinorm.resolve_batch(
            base_array, reference_array, preset="aggressive", lenient=True, threads=1
        ),
        "urljoin + w3lib.canonicalize_url": lambda: w3lib_pipeline(bases, references),
    }
    times = alternating_runs(candidates, args.runs)
    best = {name: statistics.median(runs) for name, runs in times.items()}

    def ratio(a: str, b: str) -> str:
        return f"{best[b] / best[a]:.2f}×"

    print(f"Median of {args.runs} alternating runs; {args.rows:,} rows, 200,000 link rows.\n")
    print("| what | s | ratio |")
    print("|---|---:|---:|")
    print(f"| `normalize_batch`, threads=1 | {best['threads=1']:.3f} | 1× |")
    print(
        f"| `normalize_batch`, threads=2 | {best['threads=2']:.3f} | "
        f"**{ratio('threads=2', 'threads=1')}** (goal ≥ 1.7×) |"
    )
    print(
        f"| DuckDB `urinorm_normalize` (the extension), the same rows as a table | {best['duckdb']:.3f} | "
        f"**{ratio('duckdb', 'threads=2')}** of threads=2 (goal ≥ 0.8×) |"
    )
    print(
        f"| the same as a Python UDF | {best['duckdb, udf']:.3f} | "
        f"**{ratio('duckdb, udf', 'threads=2')}** of threads=2 |"
    )
    print(
        f"| Polars `urinorm.polars.normalize`, the same rows as a frame | {best['polars']:.3f} | "
        f"**{ratio('polars', 'threads=1')}** of threads=1 (goal ≥ 0.8×) |"
    )
    print(
        f"| the same, streaming engine | {best['polars, streaming']:.3f} | "
        f"**{ratio('polars, streaming', 'threads=2')}** of threads=2 (goal ≥ 0.8×) |"
    )
    plain_s, dict_s = best["plain column, 10 % distinct, threads=1"], best[
        "dictionary column, 10 % distinct, threads=1"
    ]
    print(f"| plain column, 10 % distinct | {plain_s:.3f} | 1× |")
    print(f"| dictionary column, 10 % distinct | {dict_s:.3f} | **{plain_s / dict_s:.1f}×** (goal ≥ 5×) |")
    w3 = best["urljoin + w3lib.canonicalize_url"]
    print(f"| 200k links: `urljoin` + `w3lib.canonicalize_url`, row by row | {w3:.3f} | 1× |")
    for name in ("resolve_batch, lenient, threads=1", "resolve_batch, lenient, aggressive, threads=1"):
        print(f"| 200k links: `{name}` | {best[name]:.3f} | **{w3 / best[name]:.0f}×** |")


if __name__ == "__main__":
    main()
