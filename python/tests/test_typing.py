"""The type stubs, checked by mypy as a user's code is: a typed example
passes `--strict`, and misspelt names of rungs, keys and transforms are
caught before anything runs."""

import mypy.api

TYPED = """
import pyarrow as pa

import urinorm

key: str = urinorm.normalize("HTTP://A/", rung="scheme", preset=None, lenient=True)
print(urinorm.surt("http://a/", preset="ia"), urinorm.fingerprint("http://a/", key="surt").hex())
result, valid = urinorm.normalize_batch(
    ["http://a/", None], preset="aggressive", with_=["sort-query"], threads=2
)
prints = urinorm.fingerprint_batch(pa.array(["http://a/"]), key="domain", base="http://b/")
joined, ok = urinorm.resolve_batch(["http://a/b"], ["../c"], lenient=True, non_strict=True)
print(urinorm.resolve("http://a/b", "c", non_strict=True), result, valid, prints, joined, ok)
edges, present = urinorm.key_batch([["http://a/"], pa.array(["http://b/"])], delimiter=" ")
print(edges.to_pylist(), present)
keys, mask, why = urinorm.normalize_batch(["http://a b/"], reasons=True)
print(keys, mask, why.to_pylist())
with urinorm.SeenSet("/tmp/seen", preset="safe") as seen:
    answers: list[bool | None] = seen.add(["http://a/"])

import polars as pl
import urinorm.polars

frame = pl.DataFrame({"page": ["http://a/b"], "href": ["../c"]})
print(frame.select(urinorm.polars.resolve("page", pl.col("href"), preset="aggressive", key="surt")))

import urinorm.duckdb

con = urinorm.duckdb.connect(":memory:", read_only=False)
route: urinorm.duckdb.Route = urinorm.duckdb.register(con, preset="aggressive", prefix="agg_")
where: str | None = urinorm.duckdb.extension_path()
print(route, where, urinorm.duckdb.extension_loaded(con), con.sql("SELECT agg_normalize('http://a/')"))
"""

MISSPELT = [
    ('urinorm.normalize("http://a/", rung="schem")', '"rung"'),
    ('urinorm.normalize("http://a/", with_=["sort-qurey"])', "sort-qurey"),
    ('urinorm.surt("http://a/", preset="agressive")', '"preset"'),
    ('urinorm.normalize_batch(["x"], key="canonicl")', "normalize_batch"),
    ('import urinorm.polars\nurinorm.polars.normalize("url", rung="schem")', '"rung"'),
]


def mypy_on(tmp_path, name, code):
    path = tmp_path / name
    path.write_text(code)
    flags = ["--strict", "--ignore-missing-imports", "--cache-dir", str(tmp_path / "cache")]
    out, err, status = mypy.api.run([*flags, str(path)])
    return out + err, status


def test_a_typed_example_passes_strict(tmp_path):
    out, status = mypy_on(tmp_path, "typed.py", TYPED)
    assert status == 0, out


def test_misspelt_names_are_caught(tmp_path):
    for n, (call, named) in enumerate(MISSPELT):
        out, status = mypy_on(tmp_path, f"misspelt{n}.py", f"import urinorm\n{call}\n")
        assert status == 1, (call, out)
        assert named in out, (call, out)
