"""urinorm's functions in DuckDB's SQL: a loadable extension, or Python UDFs.

::

    import urinorm.duckdb

    con = urinorm.duckdb.connect()          # loads the extension
    urinorm.duckdb.register(con, preset="aggressive", prefix="agg_")
    con.sql("SELECT DISTINCT agg_normalize(url) FROM 'links.parquet'")

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
not an absolute URI). They come one of two ways, with the same results:

- ``"extension"``: urinorm's DuckDB extension (``urinorm.duckdb_extension``,
  shipped in this package), which DuckDB calls on its own threads with no
  Python between: 1.4 to 1.7 times the UDFs' throughput on DuckDB's two
  threads (python/bench/bench_duckdb.py). DuckDB loads it only
  into a connection opened with ``allow_unsigned_extensions`` (which
  :func:`connect` sets: the file is not signed by DuckDB). Loaded, it also
  gives each function a last ``options`` argument,
  ``urinorm_normalize(url, 'preset=aggressive; lenient=true')``; options
  given to :func:`register` become ``TEMP`` macros over those.
- ``"udf"``: vectorized Python functions over Arrow, for any connection.
  DuckDB hands each call a vector of rows as Arrow; it runs with the GIL
  released, on the calling thread.

:func:`register` returns which it used; :func:`extension_loaded` tells
whether a connection's database has the extension. Needs duckdb (1.1 or
later; the extension: 1.5.6 or later) and pyarrow.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa

import urinorm
from urinorm._options import Names, Paths, names, normalizer, paths

if TYPE_CHECKING:
    import duckdb

#: How :func:`register` made the functions.
Route = Literal["extension", "udf"]

#: The extension's file name; DuckDB calls its entry point by the base name.
EXTENSION_FILE = "urinorm.duckdb_extension"

_FUNCTIONS = {
    "normalize": ("url",),
    "surt": ("url",),
    "fingerprint": ("url",),
    "resolve": ("base", "ref"),
}


def extension_path() -> str | None:
    """The extension's file: ``$URINORM_DUCKDB_EXTENSION`` if set, else the
    one shipped beside this module; None when there is no such file."""
    given = os.environ.get("URINORM_DUCKDB_EXTENSION")
    path = Path(given) if given else Path(__file__).with_name(EXTENSION_FILE)
    return str(path) if path.is_file() else None


def extension_loaded(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether urinorm's extension is loaded in ``con``'s database."""
    rows = con.execute(
        "SELECT loaded FROM duckdb_extensions() WHERE extension_name = 'urinorm'"
    ).fetchall()
    return bool(rows and rows[0][0])


def connect(database: str = ":memory:", **kwargs: Any) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect(database, **kwargs)`` with ``allow_unsigned_extensions``
    set in its ``config``, and urinorm's functions registered with the
    default options: from the extension (:func:`extension_loaded` is then
    true), or, where the extension file is missing, as Python UDFs.

    >>> con = connect()
    >>> con.sql("SELECT urinorm_normalize('HTTP://A/%7e'), urinorm_normalize('http://www.a.example/?utm_source=x', 'preset=aggressive')").fetchall()
    [('http://a/~', 'https://a.example/')]
    """
    import duckdb

    config = dict(kwargs.pop("config", None) or {})
    config["allow_unsigned_extensions"] = True
    con = duckdb.connect(database, config=config, **kwargs)
    register(con)
    return con


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
    extension: bool | None = None,
) -> Route:
    """Adds ``urinorm_normalize``, ``urinorm_surt``, ``urinorm_fingerprint``
    and ``urinorm_resolve`` (``prefix`` then the name) to ``con``, made with
    these options (those of :func:`urinorm.normalize_batch`; checked here,
    so a misspelt one fails at once, not in a query).

    ``extension``: None (the default) loads urinorm's extension when the
    connection allows unsigned extensions (see :func:`connect`) and the
    file is there, else makes Python UDFs; True insists on the extension
    (RuntimeError, saying why, when it cannot be loaded); False makes the
    UDFs (under another ``prefix`` where the extension is loaded already:
    its functions hold the names). Returns ``"extension"`` or ``"udf"``:
    which it did.

    >>> import duckdb
    >>> con = duckdb.connect()
    >>> register(con)
    'udf'
    >>> con.sql("SELECT urinorm_normalize('HTTP://A/%7e'), urinorm_resolve('http://a/b/c', '../d')").fetchall()
    [('http://a/~', 'http://a/d')]
    """
    made = normalizer(rung, preset, with_, without, tracking_params, rules, rules_clearurls)
    if extension is not False:
        options = _options_text(
            rung, preset, with_, without, tracking_params, rules, rules_clearurls, lenient
        )
        why_not = _load(con) if options is not None else (
            "an option holds a character the extension's options cannot carry (',', ';')"
        )
        if why_not is None and options is not None:
            _macros(con, options, prefix)
            return "extension"
        if extension:
            raise RuntimeError(f"urinorm.duckdb: the extension cannot be used: {why_not}")
    _udfs(con, made, lenient, prefix)
    return "udf"


def _load(con: duckdb.DuckDBPyConnection) -> str | None:
    """Loads the extension into ``con``'s database unless it is there; None
    when it is loaded, else why not."""
    import duckdb

    if extension_loaded(con):
        return None
    path = extension_path()
    if path is None:
        return f"no {EXTENSION_FILE} beside urinorm/duckdb.py (nor $URINORM_DUCKDB_EXTENSION)"
    allowed = con.execute("SELECT current_setting('allow_unsigned_extensions')").fetchall()
    if not (allowed and allowed[0][0]):
        return (
            "the connection does not allow unsigned extensions: open it with"
            " urinorm.duckdb.connect(), or duckdb.connect(config={'allow_unsigned_extensions': True})"
        )
    try:
        con.execute(f"LOAD {_literal(path)}")
    except duckdb.Error as e:
        return f"LOAD failed: {e}"
    return None


def _options_text(
    rung: str | None,
    preset: str | None,
    with_: Names,
    without: Names,
    tracking_params: Names | None,
    rules: Paths | None,
    rules_clearurls: Paths | None,
    lenient: bool,
) -> str | None:
    """The options as the extension's last argument takes them
    (``'preset=aggressive; with=a,b'``); None when a value cannot be
    written so (a name or path with ``,`` or ``;``, or spaces around it)."""
    given: list[tuple[str, tuple[str, ...]]] = []
    if rung is not None:
        given.append(("rung", (rung,)))
    if preset is not None:
        given.append(("preset", (preset,)))
    for name, value in (("with", with_), ("without", without)):
        listed = names(value) or ()
        if listed:
            given.append((name, listed))
    tracking = names(tracking_params)
    if tracking is not None:
        given.append(("tracking_params", tracking))
    for name, files in (("rules", rules), ("rules_clearurls", rules_clearurls)):
        listed = tuple(os.path.abspath(p) for p in paths(files))
        if listed:
            given.append((name, listed))
    if lenient:
        given.append(("lenient", ("true",)))
    for _, values in given:
        for value in values:
            if not value or value != value.strip() or any(c in value for c in ",;\0"):
                return None
    return "; ".join(f"{name}={','.join(values)}" for name, values in given)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _macros(con: duckdb.DuckDBPyConnection, options: str, prefix: str) -> None:
    """The functions ``prefix`` names, as ``TEMP`` macros over the extension's
    with ``options``: none for the extension's own names and options."""
    if prefix == "urinorm_" and not options:
        # The extension's own functions, unhidden by an earlier register.
        for name in _FUNCTIONS:
            con.execute(f"DROP MACRO IF EXISTS temp.main.urinorm_{name}")
        return
    for name, arguments in _FUNCTIONS.items():
        listed = ", ".join(arguments)
        # `system.main.`: the extension's function, even where a macro of
        # the same name (prefix urinorm_) hides it.
        target = f"system.main.urinorm_{name}"
        ident = '"' + f"{prefix}{name}".replace('"', '""') + '"'
        con.execute(
            f"CREATE OR REPLACE TEMP MACRO {ident}({listed}) AS {target}({listed}, {_literal(options)}),"
            f" ({listed}, options) AS {target}({listed}, options)"
        )


def _udfs(con: duckdb.DuckDBPyConnection, made: Any, lenient: bool, prefix: str) -> None:
    """The functions as Python UDFs over Arrow vectors."""
    try:
        from duckdb.sqltypes import BLOB, VARCHAR
    except ImportError:  # duckdb before 1.4
        from duckdb.typing import BLOB, VARCHAR

    reading = {"lenient": lenient}

    def keys(key: str) -> Any:
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
