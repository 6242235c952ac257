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
  :func:`connect` sets: the file is not signed by DuckDB).
- ``"udf"``: vectorized Python functions over Arrow, for any connection.
  DuckDB hands each call a vector of rows as Arrow; it runs with the GIL
  released, on the calling thread.

Either way each function takes a last ``options`` argument, the options'
text form (the library's, as the command line's flags and Python's keyword
arguments mean them): ``urinorm_normalize(url, 'preset=aggressive;
lenient=true; key=domain')``. Options given to :func:`register` become
``TEMP`` macros that pass their text.

:func:`register` returns which it used; :func:`extension_loaded` tells
whether a connection's database has the extension. Needs duckdb (1.1 or
later; the extension: 1.5.6 or later) and pyarrow.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa

import urinorm
from urinorm._options import Names, Paths, normalizer, paths

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
    key: str = "canonical",
    lenient: bool = False,
    non_strict: bool = False,
    prefix: str = "urinorm_",
    extension: bool | None = None,
) -> Route:
    """Adds ``urinorm_normalize``, ``urinorm_surt``, ``urinorm_fingerprint``
    and ``urinorm_resolve`` (``prefix`` then the name) to ``con``, made with
    these options (those of :func:`urinorm.normalize_batch`; checked here,
    so a misspelt one fails at once, not in a query). ``key`` is the key
    ``normalize``, ``fingerprint`` and ``resolve`` make (``surt``'s is a
    SURT); ``non_strict`` is ``resolve``'s. Either way, each function also
    takes a last ``options`` argument, the options' text form
    (``'preset=aggressive; key=domain'``), which replaces these.

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
    >>> con.sql("SELECT urinorm_normalize('http://www.a.example/x', 'key=domain')").fetchall()
    [('a.example',)]
    """
    # The extension reads the files by their paths, wherever the query runs.
    rules = [os.path.abspath(p) for p in paths(rules)]
    rules_clearurls = [os.path.abspath(p) for p in paths(rules_clearurls)]
    made = normalizer(rung, preset, with_, without, tracking_params, rules, rules_clearurls)
    texts = {
        name: made.options_text(
            None if name == "surt" else key, lenient, non_strict and name == "resolve"
        )
        for name in _FUNCTIONS
    }
    if extension is not False:
        why_not = _load(con)
        if why_not is None:
            _macros(con, texts, prefix, "system.main.urinorm_")
            return "extension"
        if extension:
            raise RuntimeError(f"urinorm.duckdb: the extension cannot be used: {why_not}")
    _udfs(con, prefix)
    _macros(con, texts, prefix, f"{_UDF}{prefix}")
    return "udf"


#: What the UDFs are registered as: the names the macros call.
_UDF = "__urinorm_udf_"


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


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _macros(con: duckdb.DuckDBPyConnection, texts: dict[str, str], prefix: str, target: str) -> None:
    """The functions ``prefix`` names, as ``TEMP`` macros over ``target``'s
    (the extension's or the UDFs') with each function's options ``texts``:
    none for the extension's own names and options."""
    if target.startswith("system.") and prefix == "urinorm_" and not any(texts.values()):
        # The extension's own functions, unhidden by an earlier register.
        for name in _FUNCTIONS:
            con.execute(f"DROP MACRO IF EXISTS temp.main.urinorm_{name}")
        return
    for name, arguments in _FUNCTIONS.items():
        listed = ", ".join(arguments)
        # `system.main.`: the extension's function, even where a macro of
        # the same name (prefix urinorm_) hides it.
        function = _ident(f"{target}{name}") if not target.startswith("system.") else f"{target}{name}"
        ident = _ident(f"{prefix}{name}")
        con.execute(
            f"CREATE OR REPLACE TEMP MACRO {ident}({listed}) AS {function}({listed}, {_literal(texts[name])}),"
            f" ({listed}, options) AS {function}({listed}, options)"
        )


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _udfs(con: duckdb.DuckDBPyConnection, prefix: str) -> None:
    """The functions as Python UDFs over Arrow vectors, each taking the
    options' text form last (the macros over them give it)."""
    try:
        from duckdb.sqltypes import BLOB, VARCHAR
    except ImportError:  # duckdb before 1.4
        from duckdb.typing import BLOB, VARCHAR

    for name, arguments in _FUNCTIONS.items():
        returns = BLOB if name == "fingerprint" else VARCHAR
        udf = _udf(f"{prefix}{name}", name)
        inputs = [VARCHAR] * (len(arguments) + 1)
        con.create_function(
            f"{_UDF}{prefix}{name}", udf, inputs, returns, type="arrow", null_handling="special"
        )


def _udf(caller: str, name: str) -> Any:
    """The UDF of function ``name``: its URI arrays and an array of
    options texts in (DuckDB counts a function's parameters, so they are
    named), its values out, the rows of each options text made by one
    normalizer."""

    def made(uris: list, options: Any) -> Any:
        uris = [_flat(u) for u in uris]
        return _by_options(_flat(options), uris, lambda uris, text: _made(caller, name, uris, text))

    if name == "resolve":

        def resolved(bases: Any, references: Any, options: Any) -> Any:
            return made([bases, references], options)

        return resolved

    def keyed(urls: Any, options: Any) -> Any:
        return made([urls], options)

    return keyed


def _flat(array: Any) -> pa.Array:
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _by_options(options: pa.Array, uris: list, make) -> pa.Array:
    """``make(uris, text)`` for each distinct options text, its rows put
    back in place (a NULL text is no option)."""
    import pyarrow.compute as pc

    texts = options.fill_null("")
    distinct = pc.unique(texts).to_pylist()
    if len(distinct) == 1:
        return make(uris, distinct[0])
    parts, places = [], []
    for text in distinct:
        rows = pc.indices_nonzero(pc.equal(texts, text))
        parts.append(make([u.take(rows) for u in uris], text))
        places.append(rows)
    return pa.concat_arrays(parts).take(pc.sort_indices(pa.concat_arrays(places)))


@lru_cache(maxsize=64)
def _of_text(text: str) -> Any:
    return urinorm.Normalizer.of_text(text)


def _made(caller: str, name: str, uris: list, text: str) -> pa.Array:
    """Function ``name``'s values of ``uris`` with the options ``text``,
    refused as the extension refuses them."""
    made = _of_text(text)
    key = made.key
    if name == "surt":
        if key != "canonical":
            raise ValueError(
                f"{caller}: takes no key option: its key is a SURT (use urinorm_normalize with key={key})"
            )
        key = "surt"
    if made.non_strict and name != "resolve":
        raise ValueError(f"{caller}: non_strict is urinorm_resolve's option")
    reading = {"lenient": made.lenient, "non_strict": made.non_strict}
    if name == "resolve":
        return urinorm._resolve(pa, caller, made, uris[0], uris[1], key, False, 1, reading)[0]
    fingerprints = name == "fingerprint"
    values = urinorm._run_batch(caller, uris[0], made, key, fingerprints, 1, reading)[0]
    # DuckDB's BLOB is variable-width: the fixed-width array is cast.
    return values.cast(pa.binary()) if fingerprints else values
