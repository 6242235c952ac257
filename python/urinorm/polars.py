"""urinorm's functions as Polars expressions, run by Polars on its threads.

::

    import polars as pl
    import urinorm.polars as up

    links = pl.scan_parquet("links.parquet")
    links.select(up.resolve(pl.col("page"), pl.col("href"), preset="aggressive")).unique()

Each function takes an expression (or a column name) and returns an
expression; it is a plugin: Polars calls urinorm's library on each chunk
of the column, on as many threads as it runs, with no Python and no GIL
between. The values are those of the batch functions:

- :func:`normalize`: the canonical form (or, with ``key``, the SURT key,
  host or domain), as :func:`urinorm.normalize_batch` makes it;
- :func:`surt`: the SURT key of the canonical form;
- :func:`fingerprint`: the 16-byte fingerprint of the key (``Binary``),
  the seen store's;
- :func:`resolve`: each reference resolved against the base on its row
  (or one base for all, ``pl.lit(...)``), then normalized, as
  :func:`urinorm.resolve_batch` does;
- :func:`reason`: why a value has no key (``normalize``'s sentence), null
  where it has one.

Each is null where its input is null or is not a URI reference (or the
base not an absolute URI). The options are checked, and rules files read,
when the expression is made, so a mistake fails at once and the expression
carries everything it needs (the rules' texts, not their paths).

Importing this module also registers the ``urinorm`` namespace on
expressions: ``pl.col("url").urinorm.normalize(preset="aggressive")``.
Needs polars (1.0 or later) and the plugin library, a package of its own
(``urinorm-polars``, ``python/polars/``: ``pip install ./python/polars``),
built apart from ``urinorm`` so that only those who use Polars compile
Polars' crates.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
from polars.plugins import register_plugin_function

import urinorm
from urinorm._options import Paths, shipped

if TYPE_CHECKING:
    from polars._typing import IntoExpr

    from urinorm import KeyName, Names, Params, PresetName, RungName



def _plugin_library() -> Path:
    """Where the plugin's library is: the package ``urinorm_polars``, built
    from the same sources as this package (the options travel between them
    as this version's JSON)."""
    try:
        import urinorm_polars
    except ImportError as e:
        raise ImportError(
            "urinorm.polars needs its plugin library, the package urinorm-polars: "
            "pip install ./python/polars (from urinorm's source tree; it compiles "
            "Polars' crates, some minutes more than urinorm's own build)"
        ) from e
    if urinorm_polars.__version__ != urinorm.__version__:
        raise ImportError(
            f"urinorm-polars {urinorm_polars.__version__} is installed beside urinorm "
            f"{urinorm.__version__}: build both from the same source tree"
        )
    # The package's directory, which holds its one shared library: Polars
    # looks there for it.
    return Path(urinorm_polars.__file__).parent


_LIBRARY = _plugin_library()

__all__ = ["fingerprint", "normalize", "reason", "resolve", "surt"]


def _options(
    rung: RungName | None,
    preset: PresetName | None,
    with_: Names,
    without: Names,
    tracking_params: Params | None,
    rules: Paths | None,
    rules_clearurls: Paths | None,
    key: KeyName,
    lenient: bool,
    base: str | None,
    non_strict: bool,
) -> dict[str, Any]:
    """The plugin's keyword arguments (the Rust side's ``Kwargs``): the
    options shipped (their rules files read), checked now as the batch
    functions check them."""
    spec = shipped(
        rung, preset, with_, without, tracking_params, rules, rules_clearurls,
        key, lenient, non_strict,
    )  # fmt: skip
    if base is not None:
        # Raises InvalidUri naming the base, as normalize_batch(base=...) does.
        urinorm.resolve(base, "", lenient=lenient, non_strict=non_strict)
    return {"spec": spec, "base": base}


def _expression(function: str, args: list[IntoExpr], options: dict[str, Any]) -> pl.Expr:
    return register_plugin_function(
        plugin_path=_LIBRARY,
        function_name=function,
        args=args,
        kwargs=options,
        is_elementwise=True,
    )


def normalize(
    urls: IntoExpr,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    lenient: bool = False,
    base: str | None = None,
    non_strict: bool = False,
) -> pl.Expr:
    """The key of each URL (``String``), as :func:`urinorm.normalize_batch`
    makes it with the same options; null where the URL is null or not a
    URI reference.

    >>> import polars as pl
    >>> pl.DataFrame({"url": ["HTTP://A/%7e", None, "x y"]}).select(normalize("url"))["url"].to_list()
    ['http://a/~', None, None]
    """
    options = _options(
        rung, preset, with_, without, tracking_params, rules, rules_clearurls,
        key, lenient, base, non_strict,
    )  # fmt: skip
    return _expression("key", [urls], options)


def surt(
    urls: IntoExpr,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    lenient: bool = False,
    base: str | None = None,
    non_strict: bool = False,
) -> pl.Expr:
    """The SURT key of each URL's canonical form: :func:`normalize` with
    ``key="surt"``.

    >>> import polars as pl
    >>> pl.select(surt(pl.lit("http://www.Example.com/a?b=1"))).item()
    'com,example,www)/a?b=1'
    """
    return normalize(
        urls, rung, preset, with_, without, tracking_params, "surt",
        rules=rules, rules_clearurls=rules_clearurls, lenient=lenient, base=base,
        non_strict=non_strict,
    )  # fmt: skip


def fingerprint(
    urls: IntoExpr,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    lenient: bool = False,
    base: str | None = None,
    non_strict: bool = False,
) -> pl.Expr:
    """The 16-byte fingerprint of each URL's key (``Binary``), the bytes
    :func:`urinorm.fingerprint_batch` (and the seen store) give; null where
    there is no key.

    >>> import polars as pl
    >>> pl.select(fingerprint(pl.lit("HTTP://Example.com:80/"))).item().hex()
    '42663426682770e605cd77c9b152d153'
    """
    options = _options(
        rung, preset, with_, without, tracking_params, rules, rules_clearurls,
        key, lenient, base, non_strict,
    )  # fmt: skip
    return _expression("key_fingerprint", [urls], options)


def resolve(
    bases: IntoExpr,
    references: IntoExpr,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    lenient: bool = False,
    non_strict: bool = False,
) -> pl.Expr:
    """Each reference resolved against the base on its row (RFC 3986 §5.2),
    then normalized: the key :func:`urinorm.resolve_batch` makes, named
    after ``references``; null where either is null, the reference is not
    a URI reference or the base is not an absolute URI. A literal
    (``pl.lit(...)``) on either side stands for every row. ``lenient``
    repairs each reference (not the base); ``non_strict`` reads a reference
    with the base's scheme as relative (§5.2.2).

    >>> import polars as pl
    >>> links = pl.DataFrame({"page": ["http://a/b/c", "http://a/"], "href": ["../d", "x y"]})
    >>> links.select(resolve("page", "href"))["href"].to_list()
    ['http://a/d', None]
    """
    options = _options(
        rung, preset, with_, without, tracking_params, rules, rules_clearurls,
        key, lenient, None, non_strict,
    )  # fmt: skip
    # The references first: the plugin names its output after its first input.
    return _expression("key", [references, bases], options)


def reason(
    urls: IntoExpr,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    bases: IntoExpr | None = None,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    lenient: bool = False,
    base: str | None = None,
    non_strict: bool = False,
) -> pl.Expr:
    """Why each URL has no key with these options (``String``): the
    sentence :func:`urinorm.normalize` raises, or ``'the base: ...'`` when
    its base (``bases``, on its row, or ``base``) is at fault; null where
    the URL has a key or is null. As the batch functions' ``reasons=True``.
    The URLs come first, as in every function here but :func:`resolve`,
    whose bases come first as in :func:`urinorm.resolve_batch`: ``bases``
    is a keyword here, so that no call reads one order as the other.

    >>> import polars as pl
    >>> pl.DataFrame({"url": ["http://a/", "http://a b/"]}).select(reason("url"))["url"].to_list()
    [None, 'space is not allowed in a URI at byte 8']
    """
    options = _options(
        rung, preset, with_, without, tracking_params, rules, rules_clearurls,
        key, lenient, base, non_strict,
    )  # fmt: skip
    args = [urls] if bases is None else [urls, bases]
    return _expression("no_key_reason", args, options)


@pl.api.register_expr_namespace("urinorm")
class UrinormNamespace:
    """``pl.col(...).urinorm``: the functions above on this expression
    (as the URLs; for :meth:`resolve`, as the references)."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def normalize(self, *args: Any, **options: Any) -> pl.Expr:
        """:func:`normalize` of this expression."""
        return normalize(self._expr, *args, **options)

    def surt(self, *args: Any, **options: Any) -> pl.Expr:
        """:func:`surt` of this expression."""
        return surt(self._expr, *args, **options)

    def fingerprint(self, *args: Any, **options: Any) -> pl.Expr:
        """:func:`fingerprint` of this expression."""
        return fingerprint(self._expr, *args, **options)

    def resolve(self, bases: IntoExpr, *args: Any, **options: Any) -> pl.Expr:
        """:func:`resolve` of this expression, the references, against ``bases``."""
        return resolve(bases, self._expr, *args, **options)

    def reason(self, *args: Any, **options: Any) -> pl.Expr:
        """:func:`reason` of this expression."""
        return reason(self._expr, *args, **options)
