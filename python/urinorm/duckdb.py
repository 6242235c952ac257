"""urinorm's functions in DuckDB's SQL, vectorized over Arrow.

::

    import duckdb
    import urinorm.duckdb

    con = duckdb.connect()
    urinorm.duckdb.register(con, preset="aggressive")
    con.sql("SELECT DISTINCT urinorm_normalize(url) FROM 'links.parquet'")

:func:`register` adds to a connection, each made with the options it is
given (one set of options a connection and prefix: register again with
another ``prefix`` for another set):

- ``urinorm_normalize(url VARCHAR) -> VARCHAR``: the canonical form, as
  :func:`urinorm.normalize_batch` makes it;
- ``urinorm_surt(url VARCHAR) -> VARCHAR``: its SURT key;
- ``urinorm_fingerprint(url VARCHAR) -> BLOB``: the 16-byte fingerprint of
  the canonical form (the seen store's);
- ``urinorm_resolve(base VARCHAR, ref VARCHAR) -> VARCHAR``: ``ref``
  resolved against ``base``, then normalized, as
  :func:`urinorm.resolve_batch` does.

Each is NULL where the input is NULL or is not a URI reference (or the base
not an absolute URI). DuckDB hands each call a vector of rows as Arrow; it
runs with the GIL released, on the calling thread (DuckDB's threads are
the parallelism). Needs duckdb (1.1 or later) and pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

import urinorm
from urinorm._options import Names, Paths, normalizer

if TYPE_CHECKING:
    import duckdb


def register(
    con: duckdb.DuckDBPyConnection,
    rung: str | None = None,
    preset: str | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Names | None = None,
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    lenient: bool = False,
    prefix: str = "urinorm_",
) -> None:
    """Adds ``urinorm_normalize``, ``urinorm_surt``, ``urinorm_fingerprint``
    and ``urinorm_resolve`` (``prefix`` then the name) to ``con``, made with
    these options (those of :func:`urinorm.normalize_batch`; checked here,
    so a misspelt one fails at once, not in a query).

    >>> import duckdb
    >>> con = duckdb.connect()
    >>> register(con)
    >>> con.sql("SELECT urinorm_normalize('HTTP://A/%7e'), urinorm_resolve('http://a/b/c', '../d')").fetchall()
    [('http://a/~', 'http://a/d')]
    """
    try:
        from duckdb.sqltypes import BLOB, VARCHAR
    except ImportError:  # duckdb before 1.4
        from duckdb.typing import BLOB, VARCHAR

    made = normalizer(rung, preset, with_, without, tracking_params, rules, rules_clearurls)
    reading = {"lenient": lenient}

    def keys(key: str):
        def run(urls: Any) -> Any:
            return urinorm._run_batch(f"{prefix}{key}", urls, made, key, False, 1, reading)[0]

        return run

    def fingerprints(urls: Any) -> Any:
        prints = urinorm._run_batch(f"{prefix}fingerprint", urls, made, "canonical", True, 1, reading)
        # DuckDB's BLOB is variable-width: the fixed-width array is cast.
        return prints[0].cast(pa.binary())

    def resolved(bases: Any, references: Any) -> Any:
        caller = f"{prefix}resolve"
        return urinorm._resolve(pa, caller, made, bases, references, "canonical", False, 1, reading)[0]

    arrow = {"type": "arrow", "null_handling": "special"}
    con.create_function(f"{prefix}normalize", keys("canonical"), [VARCHAR], VARCHAR, **arrow)
    con.create_function(f"{prefix}surt", keys("surt"), [VARCHAR], VARCHAR, **arrow)
    con.create_function(f"{prefix}fingerprint", fingerprints, [VARCHAR], BLOB, **arrow)
    con.create_function(f"{prefix}resolve", resolved, [VARCHAR, VARCHAR], VARCHAR, **arrow)
