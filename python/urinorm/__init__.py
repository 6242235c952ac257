"""Normalize and deduplicate URIs to the letter of RFC 3986.

urinorm's own normalizer, compiled from the same Rust code as the ``urinorm``
command: for the same input and options, :func:`normalize` returns exactly
the line ``urinorm normalize`` prints, and :func:`surt` the line of
``urinorm normalize --key surt``.

>>> import urinorm
>>> urinorm.normalize("HTTP://www.Example.com:80/a/./b/../%7euser")
'http://www.example.com/a/~user'
>>> urinorm.normalize("http://www.example.com/?utm_source=x&id=1#top", preset="aggressive")
'https://example.com/?id=1'
>>> urinorm.surt("http://www.example.com/a?b")
'com,example,www)/a?b'
>>> urinorm.resolve("http://a/b/c/d;p?q", "../g")
'http://a/b/g'

Options, in every function: ``rung`` is ``"string"``, ``"syntax"``,
``"scheme"`` or ``"protocol"`` (RFC 3986 §6.2); ``None`` means scheme, or
protocol when a preset, a transform, a tracking list or site rules are
given, as on the command line. ``preset`` is ``"safe"``,
``"aggressive"`` or ``"ia"`` (the Internet Archive's canonicalization:
``surt(uri, preset="ia")`` is a CDX key); ``with_`` and ``without`` name protocol-rung transforms
to add to or remove from it (one name or several), and without a
``preset`` they start from ``"safe"``, as ``--with`` does on the command
line: ``with_="sort-query"`` also drops the fragment, tracking and
session parameters (``without=`` takes those out); ``tracking_params``
replaces the parameter names ``drop-tracking-params`` removes
(``"prefix*"`` for a prefix).

Site rules, keyword-only in every function: ``rules`` names files (one path
or several) in urinorm's line format, ``rules_clearurls`` files in
ClearURLs' ``data.min.json`` format, as ``--rules`` and
``--rules-clearurls`` do (the book, "Hosts, domains and site rules"): applied at the protocol
rung after the transforms, ClearURLs' providers first, then the line rules
in the order given. Rules ask for the protocol rung as a preset does (a
lower rung named with them is a ``ValueError``). A file that cannot be read
raises ``OSError`` (``FileNotFoundError`` for a missing one) naming it; a
rules file that cannot be used raises :class:`RulesError` (a
``ValueError``) with the command line's message, ``file:line: problem``.
Each call looks at the files again (one ``os.stat`` each: the normalizer
is cached on their path, inode, ``st_mtime_ns`` and size), so an edited
file is read and compiled again rather than served stale.

>>> import pathlib, tempfile
>>> site = pathlib.Path(tempfile.mkdtemp(), "site.rules")
>>> _ = site.write_text("amazon.com  drop-params  ref pf_rd_*\\n")
>>> urinorm.normalize("http://www.amazon.com/dp/1?ref=x&pf_rd_p=2&q=1", rules=site)
'http://www.amazon.com/dp/1?q=1'
>>> urinorm.normalize("http://example.com/dp/1?ref=x", rules=site)
'http://example.com/dp/1?ref=x'

:func:`normalize_batch` runs over a list or a pyarrow string array with the
GIL released; :mod:`urinorm.spark` makes a Spark column of it.
:class:`SeenSet` is a crawler frontier's memory across runs, the command
line's seen store; :class:`SeenClient` shares one among every process of a
crawl through ``urinorm serve``; :mod:`urinorm.scrapy` puts either under
Scrapy.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING

from ._options import Duration, Names, Paths
from ._options import epoch_seconds as _epoch_seconds
from ._options import normalizer as _normalizer
from ._options import seconds as _seconds
from ._urinorm import PRESETS as _PRESETS
from ._urinorm import RUNGS as _RUNGS
from ._urinorm import TRANSFORMS as _TRANSFORMS
from ._urinorm import (
    InvalidUri,
    Normalizer,
    RulesError,
    SeenStoreError,
    __version__,
    parse_duration,
    resolve,
)
from ._urinorm import SeenSet as _SeenSet
from ._urinorm import seen_config as _seen_config
from ._client import SeenClient, SeenServiceError

if TYPE_CHECKING:
    import pyarrow

__all__ = [
    "PRESETS",
    "RUNGS",
    "TRANSFORMS",
    "InvalidUri",
    "RulesError",
    "SeenClient",
    "SeenServiceError",
    "SeenSet",
    "SeenStoreError",
    "__version__",
    "fingerprint",
    "fingerprint_batch",
    "key_batch",
    "normalize",
    "normalize_batch",
    "parse_duration",
    "resolve",
    "resolve_batch",
    "seen_config",
    "surt",
]

#: The rungs of RFC 3986 §6.2, lowest first.
RUNGS: tuple[str, ...] = tuple(_RUNGS)
#: The protocol rung's transforms, in the order they apply.
TRANSFORMS: tuple[str, ...] = tuple(_TRANSFORMS)
#: Each preset's transforms.
PRESETS = MappingProxyType({name: tuple(ts) for name, ts in _PRESETS})


def normalize(
    uri: str,
    rung: str | None = None,
    preset: str | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Names | None = None,
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    lenient: bool = False,
) -> str:
    """Return the canonical form of ``uri`` at ``rung``.

    With ``lenient``, ``uri`` is first repaired as the command line's
    ``--lenient`` repairs a line (RFC 3986 Appendix C, and what browsers
    do): surrounding whitespace trimmed; ``<…>``, ``"…"``, ``'…'`` and a
    leading ``URL:`` unwrapped; tabs and line breaks inside removed; a
    space, a non-ASCII character (as UTF-8) and a character not allowed
    where it stands percent-encoded; a ``%`` not followed by two hex digits
    written ``%25``. A valid URI reference is never changed.

    Raises :class:`InvalidUri` (a ``ValueError``) when ``uri`` is not a URI
    reference, with the command line's reason as its message, and
    ``ValueError`` for an unknown option or protocol options under a lower
    rung; for ``rules`` and ``rules_clearurls`` (paths of site rules files),
    :class:`RulesError` (a ``ValueError``) for a file that cannot be used and
    ``OSError`` for one that cannot be read (see the module).
    """
    normalizer = _normalizer(rung, preset, with_, without, tracking_params, rules, rules_clearurls)
    return normalizer.normalize(uri, lenient)


def surt(
    uri: str,
    rung: str | None = None,
    preset: str | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Names | None = None,
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    lenient: bool = False,
) -> str:
    """Return the SURT key of the canonical form of ``uri``.

    ``http://www.example.com:8080/a?b`` gives ``com,example,www:8080)/a?b``:
    the key of web-archive CDX indexes, made from the canonical form at
    ``rung``. Raises and repairs (``lenient``) as :func:`normalize` does.
    """
    normalizer = _normalizer(rung, preset, with_, without, tracking_params, rules, rules_clearurls)
    return normalizer.surt(uri, lenient)


def fingerprint(
    uri: str,
    rung: str | None = None,
    preset: str | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Names | None = None,
    key: str = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    lenient: bool = False,
) -> bytes:
    """Return the 16-byte fingerprint of ``uri``'s key.

    The key is the canonical form at ``rung`` (or its SURT with
    ``key="surt"``); the fingerprint is XXH3-128 with seed 0 over the key's
    bytes, most significant byte first: a stable, documented function that
    gives the same bytes on every machine and in every version, so a store of
    fingerprints can outlive the process. Raises and repairs (``lenient``)
    as :func:`normalize` does.

    >>> fingerprint("HTTP://Example.com:80/").hex()
    '42663426682770e605cd77c9b152d153'
    """
    normalizer = _normalizer(rung, preset, with_, without, tracking_params, rules, rules_clearurls)
    return normalizer.fingerprint(uri, key, lenient)


def normalize_batch(
    values: Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray,
    rung: str | None = None,
    preset: str | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Names | None = None,
    key: str = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    base: str | None = None,
    non_strict: bool = False,
    reasons: bool = False,
):
    """Normalize many values at once, with the GIL released; needs pyarrow.

    ``values`` is an iterable of ``str`` or ``None`` (a list, say), or an
    Arrow array of strings, or a chunked array of them: ``string`` and
    ``large_string`` are read in place, not converted to Python strings;
    ``string_view`` is read as ``large_string`` (one copy); a dictionary
    array has its dictionary normalized once and keeps its indices (the
    result is a dictionary array); an all-null array gives nulls. Anything
    that exports Arrow through the PyCapsule interface (a Polars Series, a
    DuckDB result's column) and a pandas Series (``None``, ``NaN`` and
    ``pd.NA`` are nulls) are taken as the Arrow array they convert to. One
    string is a ``TypeError``: wrap it in a list.
    ``key`` is ``"canonical"`` (the canonical form), ``"surt"`` (its SURT
    key), ``"host"`` (its host) or ``"domain"`` (the host's registrable
    domain by the Public Suffix List; a URI without a host gives a null).

    Returns ``(result, valid)``: ``result`` holds, in input order, the key of
    each value, and null where the value was null or is not a URI reference;
    ``valid`` is a ``pyarrow.BooleanArray`` without nulls, true where
    ``result`` has a key (``result.is_valid()``, ready for
    ``pyarrow.compute.filter`` or ``valid.to_numpy(zero_copy_only=False)``).
    ``result`` is a ``pyarrow.StringArray``, a ``LargeStringArray`` for a
    ``large_string`` input, and a ``ChunkedArray`` (with ``valid`` one too,
    chunk for chunk) for a chunked input. Invalid values raise nothing: use
    :func:`normalize` on one to learn its reason.

    ``threads`` is how many threads share the work: by default one a core,
    ``1`` for the calling thread alone (as in a Spark task, which has its
    core). The result is the same for any number.

    ``lenient`` repairs each value first, as :func:`normalize` does;
    ``base`` resolves each against one absolute URI (``--base``; an invalid
    base raises :class:`InvalidUri` at once), ``non_strict`` with the
    non-strict reading of RFC 3986 §5.2.2 (``http:g`` is relative to an
    ``http`` base). For a base per row, see :func:`resolve_batch`.

    With ``reasons``, a third array comes back: a ``large_string`` array
    that says, where ``result`` is null, why (the sentence
    :func:`normalize` would raise, e.g. ``'space is not allowed in a URI at
    byte 8'``), and is null where ``result`` has a key or the value was
    null: a null input and an invalid one are told apart.

    >>> result, valid, why = normalize_batch(["http://a/", None, "http://a b/"], reasons=True)
    >>> why.to_pylist()
    [None, None, 'space is not allowed in a URI at byte 8']
    """
    normalizer = _normalizer(rung, preset, with_, without, tracking_params, rules, rules_clearurls)
    reading = {"lenient": lenient, "base": base, "non_strict": non_strict, "reasons": reasons}
    return _run_batch("normalize_batch", values, normalizer, key, threads=threads, reading=reading)


def fingerprint_batch(
    values: Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray,
    rung: str | None = None,
    preset: str | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Names | None = None,
    key: str = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    base: str | None = None,
    non_strict: bool = False,
    reasons: bool = False,
):
    """The 16-byte :func:`fingerprint` of each value's key, as a pyarrow
    ``fixed_size_binary(16)`` array, with the GIL released; needs pyarrow.

    ``values``, ``threads``, ``lenient``, ``base`` and ``non_strict`` are
    taken as :func:`normalize_batch` takes them (a dictionary array's
    fingerprints are not a dictionary); with ``reasons``, the result is
    ``(fingerprints, reasons)``. The result is null where the value was
    null or is not a URI reference, and a chunked array for a chunked
    input. The bytes are those :func:`fingerprint` (and
    the seen store) give: a Spark job can keep its history as a Parquet
    column of them and anti-join a new batch.

    >>> fingerprint_batch(["HTTP://Example.com:80/", None])[0].as_py().hex()
    '42663426682770e605cd77c9b152d153'
    """
    normalizer = _normalizer(rung, preset, with_, without, tracking_params, rules, rules_clearurls)
    reading = {"lenient": lenient, "base": base, "non_strict": non_strict, "reasons": reasons}
    result, _, *why = _run_batch("fingerprint_batch", values, normalizer, key, True, threads, reading)
    return (result, *why) if reasons else result


def resolve_batch(
    bases: Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray,
    references: Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray,
    rung: str | None = None,
    preset: str | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Names | None = None,
    key: str = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    non_strict: bool = False,
    fingerprints: bool = False,
    reasons: bool = False,
):
    """Resolve each of ``references`` against the base on its row, then
    normalize it: a link dataset's ``(page, href)`` columns made keys, as
    ``urinorm normalize --field 2 --base-field 1`` makes them; needs pyarrow.

    ``bases`` and ``references`` are of one length, each taken as
    :func:`normalize_batch` takes ``values``. Returns ``(result, valid)``
    as :func:`normalize_batch` does (chunked arrays of one chunk when an
    input is chunked): null where the reference or the base is null, the
    reference is not a URI reference, or the base is not an absolute URI.
    ``lenient`` repairs each reference and its base first, as the command
    line's ``--lenient`` does; ``non_strict`` reads a reference with the
    base's scheme as relative (RFC 3986 §5.2.2). Unlike :func:`resolve`,
    which gives the resolved URI as RFC 3986 §5.2 makes it, the result is
    normalized (the key). With ``fingerprints``, ``result`` is
    their 16-byte fingerprints (``fixed_size_binary(16)``). With ``reasons``, a
    third array says why each null row is null, as :func:`normalize_batch`'s
    does; a base at fault is named (``'the base: ...'``).

    >>> result, valid = resolve_batch(["http://a/b/c", "http://a/", None], ["../d", "x y", "/z"])
    >>> result.to_pylist()
    ['http://a/d', None, None]
    """
    _many("resolve_batch", bases)
    _many("resolve_batch", references)
    pa = _pyarrow("resolve_batch")
    normalizer = _normalizer(rung, preset, with_, without, tracking_params, rules, rules_clearurls)
    reading = {"lenient": lenient, "non_strict": non_strict, "reasons": reasons}
    return _resolve(pa, "resolve_batch", normalizer, bases, references, key, fingerprints, threads, reading)


def key_batch(
    columns: Sequence[Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray],
    rung: str | None = None,
    preset: str | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Names | None = None,
    key: str = "canonical",
    *,
    delimiter: str = "\t",
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    fingerprints: bool = False,
    reasons: bool = False,
):
    """One key a row made of several URI columns: each column's key,
    joined by ``delimiter``, as ``urinorm dedup --key-fields`` makes a
    line's key (an edge ``(page, href)`` counted once, say); needs pyarrow.

    ``columns`` are of one length, each taken as :func:`normalize_batch`
    takes ``values``. Returns ``(result, valid)`` as :func:`resolve_batch`
    does (chunked when an input is): null where any column is null or not a URI reference. With
    ``fingerprints``, ``result`` is the 16-byte fingerprints of the joined
    keys (:func:`fingerprint`'s hash of their bytes). With ``reasons``, a third array says why each null row is
    null, naming the column at fault (``'columns[1]: ...'``).

    >>> pages, links = ["HTTP://A/", "http://a/", None], ["http://B/x", "x y", "http://c/"]
    >>> result, valid = key_batch([pages, links], delimiter=" ")
    >>> result.to_pylist()
    ['http://a/ http://b/x', None, None]
    """
    _many("key_batch", columns)
    columns = list(columns)
    for column in columns:
        _many("key_batch", column)
    if len(delimiter.encode()) != 1:
        raise ValueError(f"the delimiter is one byte, not {delimiter!r}")
    pa = _pyarrow("key_batch")
    normalizer = _normalizer(rung, preset, with_, without, tracking_params, rules, rules_clearurls)
    columns = [_as_arrow(pa, column) for column in columns]
    made = normalizer.batch_columns(
        [_plain_strings(pa, "key_batch", column) for column in columns],
        delimiter.encode()[0],
        key,
        fingerprints,
        threads,
        _reading({"lenient": lenient, "reasons": reasons}),
    )
    return _chunked_like(pa, columns, _arrays(pa, made))


def _resolve(pa, caller, normalizer, bases, references, key, fingerprints, threads, reading):
    """:func:`resolve_batch`'s arrays, its options made."""
    bases, references = _as_arrow(pa, bases), _as_arrow(pa, references)
    made = normalizer.batch_resolve(
        _plain_strings(pa, caller, references),
        _plain_strings(pa, caller, bases),
        key,
        fingerprints,
        threads,
        _reading(reading),
    )
    return _chunked_like(pa, (bases, references), _arrays(pa, made))


def _chunked_like(pa, inputs, made):
    """``made`` (the result arrays) chunked when an input was: chunked in,
    chunked out, as :func:`normalize_batch` answers."""
    if any(isinstance(given, pa.ChunkedArray) for given in inputs):
        return tuple(pa.chunked_array([array]) for array in made)
    return made


def _plain_strings(pa, caller: str, values):
    """``values`` as one pyarrow ``string`` or ``large_string`` array."""
    array = _as_arrow(pa, values)
    if not isinstance(array, (pa.Array, pa.ChunkedArray)):
        array = pa.array(list(array), type=pa.string())
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if pa.types.is_null(array.type):
        array = array.cast(pa.string())
    if hasattr(pa.types, "is_string_view") and pa.types.is_string_view(array.type):
        array = array.cast(pa.large_string())
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        raise TypeError(f"{caller} takes strings, not {array.type}")
    return array


def _many(caller: str, values) -> None:
    """A ``TypeError`` for one string where many values are expected: a
    string is iterable, and would be read as its characters."""
    if isinstance(values, (str, bytes)):
        raise TypeError(
            f"{caller} takes many values (a list, an Arrow array), not one string:"
            f" wrap it in a list, or take one value with normalize()"
        )


def _pyarrow(caller: str):
    try:
        import pyarrow as pa
    except ImportError as e:
        raise ImportError(
            f"{caller} returns pyarrow arrays: pip install pyarrow (or urinorm[arrow])"
        ) from e
    return pa


def _run_batch(
    caller: str,
    values,
    normalizer: Normalizer,
    key: str,
    fingerprints: bool = False,
    threads: int | None = None,
    reading: dict | None = None,
):
    _many(caller, values)
    pa = _pyarrow(caller)
    reading = _reading(reading)
    run = _Run(pa, caller, normalizer, key, fingerprints, threads, reading)
    values = _as_arrow(pa, values)
    if isinstance(values, pa.ChunkedArray):
        made = [run.array(chunk) for chunk in values.chunks]
        if not made:
            made = [run.array(pa.array([], type=values.type))]
        # Result, mask and reasons: each chunked, chunk for chunk.
        return tuple(pa.chunked_array(arrays, type=arrays[0].type) for arrays in zip(*made))
    if isinstance(values, pa.Array):
        return run.array(values)
    return _arrays(pa, normalizer.batch_list(values, key, fingerprints, threads, reading))


def _reading(options: dict | None) -> dict:
    """How each value is read (the Rust side's `Reading`): as written,
    except where ``options`` say otherwise."""
    plain = {"lenient": False, "base": None, "non_strict": False, "reasons": False}
    return {**plain, **(options or {})}


def _as_arrow(pa, values):
    """``values`` as a pyarrow array or chunked array where it is, or can
    become, one; else as given (an iterable of ``str`` or ``None``)."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    if hasattr(values, "__arrow_c_array__"):
        return pa.array(values)
    if hasattr(values, "__arrow_c_stream__"):
        return pa.chunked_array(values)
    if type(values).__module__.startswith("pandas") and hasattr(values, "dtype"):
        # None, NaN and pd.NA are nulls.
        return pa.array(values, from_pandas=True)
    return values


def _is_text(types, arrow_type) -> bool:
    """Whether an Arrow type is one of strings."""
    view = hasattr(types, "is_string_view") and types.is_string_view(arrow_type)
    return view or types.is_string(arrow_type) or types.is_large_string(arrow_type)


class _Run:
    """One batch call's options, applied to each Arrow array of its input."""

    def __init__(self, pa, caller, normalizer, key, fingerprints, threads, reading):
        self.pa, self.caller, self.normalizer = pa, caller, normalizer
        self.key, self.fingerprints, self.threads = key, fingerprints, threads
        self.reading = reading

    def array(self, array):
        """``(result, valid)`` for one Arrow array of any type of strings,
        and the reasons if asked for."""
        pa, types = self.pa, self.pa.types
        if types.is_null(array.type):
            result_type = pa.binary(16) if self.fingerprints else pa.string()
            made = pa.nulls(len(array), type=result_type), pa.repeat(False, len(array))
            why = (pa.nulls(len(array), type=pa.large_string()),) if self.reading["reasons"] else ()
            return (*made, *why)
        if types.is_dictionary(array.type) and _is_text(types, array.type.value_type):
            return self.dictionary(array)
        if hasattr(types, "is_string_view") and types.is_string_view(array.type):
            array = array.cast(pa.large_string())
        if not (types.is_string(array.type) or types.is_large_string(array.type)):
            raise TypeError(
                f"{self.caller} takes an Arrow array of strings (string, large_string,"
                f" string_view, or a dictionary of them), not {array.type}"
            )
        keys = self.normalizer.batch_arrow(
            array, self.key, self.fingerprints, self.threads, self.reading
        )
        return _arrays(pa, keys)

    def dictionary(self, array):
        """Each distinct value normalized once; the indices kept."""
        pa = self.pa
        result, valid, *why = self.array(array.dictionary)
        indices = array.indices
        valid = valid.take(indices).fill_null(False)
        why = [reasons.take(indices) for reasons in why]
        if self.fingerprints:
            return (result.take(indices), valid, *why)
        return (pa.DictionaryArray.from_arrays(indices, result), valid, *why)


def _arrays(pa, made):
    """``(result, valid)`` from what a batch made, and its reasons when it
    made them."""
    keys, reasons = made
    result, valid = _array(pa, keys)
    # The mask shares the result's validity bitmap.
    mask = pa.Array.from_buffers(pa.bool_(), len(keys), [None, valid])
    if reasons is None:
        return result, mask
    return result, mask, _array(pa, reasons)[0]


def _array(pa, keys):
    """The Arrow array of a batch's buffers, and its validity bitmap."""

    # The buffers stay where Rust wrote them: each pyarrow buffer keeps
    # `keys`, their owner, alive.
    def wrap(address_size):
        address, size = address_size
        return pa.foreign_buffer(address, size, base=keys)

    valid = wrap(keys.validity)
    if keys.fingerprints:
        arrow_type, buffers = pa.binary(16), [valid, wrap(keys.data)]
    else:
        arrow_type = pa.large_string() if keys.large else pa.string()
        buffers = [valid, wrap(keys.offsets), wrap(keys.data)]
    array = pa.Array.from_buffers(arrow_type, len(keys), buffers, null_count=keys.null_count)
    return array, valid


def seen_config(
    rung: str | None = None,
    preset: str | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Names | None = None,
    key: str = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
) -> dict[str, str]:
    """The key configuration a seen store of keys made with these options
    records (its options are :class:`SeenSet`'s, with a frontier's
    defaults): the settings ``urinorm seen stats`` shows and ``urinorm seen
    export`` writes in a history's ``_urinorm.json``. Two stores, or a
    store and a Spark history, share keys only when theirs are equal.

    >>> seen_config(rung="scheme")["rung"]
    'scheme'
    >>> seen_config(rung="scheme") == seen_config(rung="scheme", key="surt")
    False
    """
    normalizer = _normalizer(
        rung, preset, with_, without, tracking_params, rules, rules_clearurls, frontier=True
    )
    return dict(_seen_config(normalizer, key))


class SeenSet:
    """The keys a crawler frontier has admitted, kept in a seen store: the
    directory ``urinorm dedup --seen DIR`` reads and writes, with the same
    fingerprints, so a store made by either opens in the other.

    ``add(values)`` answers, for each value, whether its key is new (then
    admits it); ``contains(values)`` whether it is held. Admitted keys are
    kept in memory until :meth:`commit` (or :meth:`close`, or the end of a
    ``with`` block without an error) writes them to the store, atomically:
    a process killed before that loses only what it admitted since the last
    commit, and the store is never damaged. One process at a time may hold
    a store (``wait=True`` waits for the other).

    The options are :func:`normalize`'s and ``key`` (``"canonical"`` or
    ``"surt"``); with none of them, a frontier's default: the ``safe``
    preset with ``sort-query-pairs`` (fragments, tracking and session
    parameters and the order of query parameters make no other page), as
    ``urinorm serve`` and ``dedup --seen`` make keys with no option, and
    the Scrapy filter. Only what a crawler fetches is taken: a relative
    reference, an http(s) URI without a host, and a URI of another scheme
    than http, https, ftp, ftps, ws and wss (``mailto:``, ``javascript:``)
    are answered ``None``. The store records the options, and a store made
    with others is refused (:class:`SeenStoreError`): keys made differently
    cannot be compared. Site rules (``rules``, ``rules_clearurls``) are read once, when
    the store opens, and recorded by their contents' fingerprint, not their
    paths: a store made under other rules is refused, and the same rules
    read from another path are the same.

    Each key carries the time of the commit that admitted it. With
    ``max_age`` (seconds, a ``timedelta``, or ``"7d"`` as the command line
    writes it), a key admitted longer ago counts as not held: ``add``
    answers it new and admits it again, with the new time (a recrawl).
    ``now`` (a ``datetime``, UTC when naive, or seconds since the epoch)
    stands for the clock's time, for replays and tests.

    With ``budget_per_host`` (or ``budget_per_domain``) N, at most N keys
    of each host (registrable domain) are in the store, across runs, as
    the command line's ``--budget-per-host`` keeps them: ``add`` answers a
    new key past it ``False``, admits nothing, and counts it in
    :attr:`capped`. Keys that expire or are forgotten give their slots back.

    >>> import tempfile
    >>> with SeenSet(tempfile.mkdtemp()) as seen:
    ...     seen.add(["http://a/", "HTTP://A:80/", "http://b/", "not a uri"])
    ...     seen.contains(["http://A/"])
    [True, False, True, None]
    [True]
    """

    def __init__(
        self,
        path: str | os.PathLike,
        rung: str | None = None,
        preset: str | None = None,
        with_: Names = (),
        without: Names = (),
        tracking_params: Names | None = None,
        key: str = "canonical",
        wait: bool = False,
        *,
        rules: Paths | None = None,
        rules_clearurls: Paths | None = None,
        max_age: Duration | None = None,
        now: datetime | float | None = None,
        budget_per_host: int | None = None,
        budget_per_domain: int | None = None,
    ):
        normalizer = _normalizer(
            rung, preset, with_, without, tracking_params, rules, rules_clearurls, frontier=True
        )
        self._attach(path, normalizer, key, wait, max_age, now, budget_per_host, budget_per_domain)

    @classmethod
    def _with_normalizer(
        cls, path, normalizer, max_age=None, budget_per_host=None, budget_per_domain=None
    ) -> "SeenSet":
        """The store at ``path`` for keys ``normalizer`` makes (for
        urinorm.scrapy, whose filter made it from its settings, reading the
        rules once)."""
        seen = cls.__new__(cls)
        seen._attach(
            path, normalizer, "canonical", False, max_age, None, budget_per_host, budget_per_domain
        )
        return seen

    def _attach(
        self, path, normalizer, key, wait, max_age, now, budget_per_host, budget_per_domain
    ) -> None:
        # Kept for urinorm.scrapy: its keys are made by the store's normalizer.
        self._normalizer = normalizer
        self._set = _SeenSet(
            os.fspath(path),
            normalizer,
            key,
            wait,
            max_age=_seconds(max_age),
            now=_epoch_seconds(now),
            budget_per_host=budget_per_host,
            budget_per_domain=budget_per_domain,
        )

    @property
    def capped(self) -> int:
        """New keys past their site's budget since the store was opened,
        not admitted."""
        return self._set.capped

    def add(self, values):
        """For each value, whether its key is new, admitting it: a list of
        ``bool`` (``None`` where the value is ``None``, not a URI reference,
        or no URI a crawler can fetch: a relative reference, an http(s) URI
        without a host), or for a pyarrow array a ``BooleanArray`` (null
        there). A key repeated within ``values`` is new only the first
        time."""
        return self._ask(values, contains=False)

    def contains(self, values):
        """For each value, whether its key is held (committed or admitted
        since), as :meth:`add` answers, admitting nothing."""
        return self._ask(values, contains=True)

    def add_keys(self, keys: Iterable[bytes | str]) -> list[bool]:
        """Admits keys made by the caller, taken as they are (not
        normalized): whether each is new."""
        _many("SeenSet.add_keys", keys)
        return self._set.add_keys([k.encode() if isinstance(k, str) else bytes(k) for k in keys])

    def commit(self) -> int:
        """Writes the keys admitted since the last commit to the store;
        returns how many."""
        return self._set.commit()

    def close(self) -> None:
        """Commits, then lets the store (and its lock) go."""
        self._set.close()

    def __len__(self) -> int:
        return self._set.__len__()

    def __contains__(self, value: str) -> bool:
        return bool(self.contains([value])[0])

    def __enter__(self) -> SeenSet:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        # After an error, what was admitted may not have been acted on:
        # it is answered new again next time rather than lost.
        if kind is None:
            self._set.close()
        else:
            self._set.discard()

    def __repr__(self) -> str:
        return f"SeenSet({len(self)} keys; {self._set.config()})"

    def _ask(self, values, contains: bool):
        _many("SeenSet.contains" if contains else "SeenSet.add", values)
        try:
            import pyarrow as pa
        except ImportError:
            pa = None
        if pa is not None and isinstance(values, pa.ChunkedArray):
            chunks = [self._ask(chunk, contains) for chunk in values.chunks]
            return pa.chunked_array(chunks, type=pa.bool_())
        if pa is not None and isinstance(values, pa.Array):
            if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
                raise TypeError(f"SeenSet takes a string or large_string array, not {values.type}")
            return pa.array(self._set.ask_arrow(values, contains), type=pa.bool_())
        return self._set.ask_list(list(values), contains)
