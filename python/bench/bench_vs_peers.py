"""Throughput of urinorm's Python API against w3lib and urlcanon, on one core.

Usage (from the repository root):

    scripts/python-env --bench
    .venv/bin/python python/bench/bench_vs_peers.py [--repeat N] [--runs R]
        [--lines FILE --count N] [--json OUT]

Every candidate canonicalizes the same lines, the shipped sample
(testdata/sample/urls.txt, 5,000 real URLs) repeated N times (default 20),
or the first N lines of FILE (a benchmark corpus; lines that are not UTF-8
are left out), in this process pinned to one core; each is timed R times (default 5) and
its best run is kept. Peers:

- ``w3lib.url.canonicalize_url`` (Scrapy's): a crawler's canonicalization
  (sorted query, no fragment, percent-encoding made uniform), the closest to
  urinorm's protocol rung with the ``aggressive`` preset, which is measured
  beside it;
- ``urlcanon.whatwg`` (the Internet Archive's): WHATWG URL parsing and
  serialization, the closest to urinorm's scheme rung (case, default port,
  dot segments, IDNA); parse, canonicalize and serialize, as bytes.

A line a peer raises on counts as done (none of them reject the sample's
lines quietly the way urinorm does; the count is printed).
Prints a Markdown table; ratios are lines per second over w3lib's.
``--json OUT`` also writes the lines per second of the aggressive batch and
w3lib (for scripts/bench-throughput).
"""

import argparse
import json
import os
import time
from pathlib import Path

import pyarrow as pa
import urlcanon
import w3lib.url

import urinorm

SAMPLE = Path(__file__).resolve().parents[2] / "testdata" / "sample" / "urls.txt"


def sample_lines() -> list[str]:
    text = SAMPLE.read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    return [line for line in text.splitlines() if line]


def file_lines(path: Path, count: int) -> list[str]:
    lines = []
    with path.open("rb") as f:
        for raw in f:
            if len(lines) == count:
                break
            try:
                lines.append(raw.rstrip(b"\r\n").decode("utf-8"))
            except UnicodeDecodeError:
                continue
    return lines


def each(function, lines):
    """Calls `function` on every line; returns how many raised."""
    failed = 0
    for line in lines:
        try:
            function(line)
        except Exception:  # noqa: BLE001 - a peer's rejection, counted
            failed += 1
    return failed


def urlcanon_whatwg(line: str) -> bytes:
    url = urlcanon.parse_url(line)
    urlcanon.whatwg(url)
    return bytes(url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="copies of the sample (default 20)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each (default 5)")
    parser.add_argument("--lines", type=Path, help="a file of lines, instead of the sample")
    parser.add_argument("--count", type=int, default=200_000, help="lines of --lines (default 200,000)")
    parser.add_argument("--json", type=Path, help="also write the aggressive and w3lib rates here")
    args = parser.parse_args()

    # One core: the batch loop is single-threaded, and so are the peers.
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})

    lines = file_lines(args.lines, args.count) if args.lines else sample_lines() * args.repeat
    array = pa.array(lines, type=pa.string())

    def batch(values, **options):
        # One thread: the process has one core (see python/bench/bench_batch.py for more).
        return lambda: urinorm.normalize_batch(values, threads=1, **options)[1].false_count

    candidates = [
        ("`urinorm.normalize_batch`, Arrow array, scheme rung", batch(array)),
        ("`urinorm.normalize_batch`, list of str, scheme rung", batch(lines)),
        (
            '`urinorm.normalize_batch`, Arrow array, `preset="aggressive"`',
            batch(array, preset="aggressive"),
        ),
        (
            "`urinorm.normalize`, one call a line, scheme rung",
            lambda: each(urinorm.normalize, lines),
        ),
        (
            '`urinorm.normalize`, one call a line, `preset="aggressive"`',
            lambda: each(lambda line: urinorm.normalize(line, preset="aggressive"), lines),
        ),
        ("`w3lib.url.canonicalize_url` 2.5", lambda: each(w3lib.url.canonicalize_url, lines)),
        (
            "`urlcanon.whatwg` 0.3.1 (parse, canonicalize, serialize)",
            lambda: each(urlcanon_whatwg, lines),
        ),
    ]

    results = []
    for name, run in candidates:
        best = float("inf")
        for _ in range(args.runs):
            start = time.perf_counter()
            failed = run()
            best = min(best, time.perf_counter() - start)
        results.append((name, len(lines) / best, failed))
        print(f"{name}: {len(lines) / best:,.0f} lines/s ({failed} not done)", flush=True)

    w3lib_rate = next(rate for name, rate, _ in results if "w3lib" in name)
    if args.json:
        aggressive = next(rate for name, rate, _ in results if "Arrow array, `preset" in name)
        rates = {"normalize_batch aggressive": aggressive, "w3lib": w3lib_rate}
        args.json.write_text(json.dumps(rates))
    print()
    source = f"the first of {args.lines.name}" if args.lines else f"{args.repeat} × the sample"
    print(f"{len(lines):,} lines ({source}), one core, best of {args.runs} runs:")
    print()
    print("| what | lines/s | ns/line | vs w3lib | lines it rejected or raised on |")
    print("|---|---:|---:|---:|---:|")
    for name, rate, failed in results:
        print(
            f"| {name} | {rate:,.0f} | {1e9 / rate:,.0f} | {rate / w3lib_rate:.1f}× | {failed:,} |"
        )


if __name__ == "__main__":
    main()
