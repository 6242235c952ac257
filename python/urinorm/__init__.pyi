"""Type stubs for urinorm: the public API of urinorm/__init__.py and its extension module."""

import datetime
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, TypeAlias, overload

import pyarrow

__version__: str

#: The rungs of RFC 3986 §6.2, lowest first.
RUNGS: tuple[str, ...]
#: The protocol rung's transforms, in the order they apply.
TRANSFORMS: tuple[str, ...]
#: Each preset's transforms.
PRESETS: Mapping[str, tuple[str, ...]]

#: A rung's name (``RUNGS``).
RungName: TypeAlias = Literal["string", "syntax", "scheme", "protocol"]
#: A preset's name (``PRESETS``).
PresetName: TypeAlias = Literal["safe", "aggressive", "ia"]
#: What a batch's result holds of each value.
KeyName: TypeAlias = Literal["canonical", "surt", "host", "domain"]
#: A transform's name (``TRANSFORMS``).
TransformName: TypeAlias = Literal[
    "drop-userinfo",
    "host-trailing-dot",
    "host-dots",
    "strip-www",
    "strip-www-digits",
    "ipv4-numeric",
    "https-upgrade",
    "decode-repeatedly",
    "drop-session-ids",
    "ia-session-ids",
    "collapse-slashes",
    "drop-index-file",
    "trailing-slash=add",
    "trailing-slash=remove",
    "lowercase-path",
    "decode-safe",
    "drop-tracking-params",
    "drop-empty-params",
    "lowercase-query",
    "sort-query",
    "sort-query-pairs",
    "drop-empty-query",
    "drop-fragment",
    "cdx-spelling",
]
#: One transform name, or several.
Names: TypeAlias = TransformName | Iterable[TransformName]
#: One query parameter name, or several.
Params: TypeAlias = str | Iterable[str]

#: A batch's result with ``reasons=True``: the keys, the mask, and why each
#: null row is null (a ``large_string`` array), each chunked for a chunked
#: input.
Explained: TypeAlias = tuple[
    pyarrow.Array | pyarrow.ChunkedArray,
    pyarrow.BooleanArray | pyarrow.ChunkedArray,
    pyarrow.LargeStringArray | pyarrow.ChunkedArray,
]
#: One path (of a site rules file), or several.
Paths: TypeAlias = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]

class InvalidUri(ValueError):
    """The input is not a URI reference (RFC 3986), or its host or port
    cannot be what its scheme names. ``str(e)`` is the command line's reason,
    e.g. ``'invalid percent-encoding at byte 10'``."""

    #: The 0-based byte offset where the input stops being a URI reference;
    #: None when the reason is about the whole URI (no host to key on, a
    #: site rule's result).
    offset: int | None
    #: The reason without the offset, e.g. ``'invalid percent-encoding'``.
    reason: str
    #: From :func:`resolve`, the argument at fault: ``"base"`` or
    #: ``"reference"`` (the message then starts ``the base: ``); else None.
    argument: str | None

class RulesError(ValueError):
    """A site rules file cannot be used (``rules``, ``rules_clearurls``): an
    unknown action, a bad host pattern or regular expression, not ClearURLs'
    format, not UTF-8. ``str(e)`` is the command line's message, naming the
    place: ``'site.rules:4: unknown action ...'``."""

    #: The file's name, as given.
    file: str
    #: The 1-based line the problem is on, or None for the whole file.
    line: int | None
    #: What is wrong, without the place.
    problem: str

def normalize(
    uri: str,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    lenient: bool = False,
) -> str:
    """Return the canonical form of ``uri`` at ``rung``; raises InvalidUri.

    ``rules`` and ``rules_clearurls`` are paths of site rules files
    (``--rules``, ``--rules-clearurls``); RulesError for one that cannot be
    used, OSError for one that cannot be read."""

def fingerprint(
    uri: str,
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
) -> bytes:
    """Return the 16-byte XXH3-128 fingerprint of ``uri``'s key; raises InvalidUri."""

@overload
def fingerprint_batch(
    values: Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    base: str | None = None,
    non_strict: bool = False,
    reasons: Literal[True],
) -> tuple[
    pyarrow.FixedSizeBinaryArray | pyarrow.ChunkedArray,
    pyarrow.LargeStringArray | pyarrow.ChunkedArray,
]: ...
@overload
def fingerprint_batch(
    values: Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    base: str | None = None,
    non_strict: bool = False,
    reasons: Literal[False] = False,
) -> pyarrow.FixedSizeBinaryArray | pyarrow.ChunkedArray:
    """The 16-byte fingerprint of each value's key (fixed_size_binary(16)); null where invalid."""

def surt(
    uri: str,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    lenient: bool = False,
) -> str:
    """Return the SURT key of the canonical form of ``uri``; raises InvalidUri."""

def resolve(
    base: str, reference: str, *, lenient: bool = False, non_strict: bool = False
) -> str:
    """Resolve ``reference`` against ``base`` (RFC 3986 §5.2; ``non_strict``:
    §5.2.2's non-strict reading), each repaired first if ``lenient``; raises
    InvalidUri naming the argument at fault (``e.argument``). The target is
    as §5.2 makes it, not normalized: :func:`resolve_batch` gives its key."""

@overload
def resolve_batch(
    bases: Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray,
    references: Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    non_strict: bool = False,
    fingerprints: bool = False,
    reasons: Literal[True],
) -> Explained: ...
@overload
def resolve_batch(
    bases: Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray,
    references: Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    non_strict: bool = False,
    fingerprints: Literal[False] = False,
    reasons: Literal[False] = False,
) -> tuple[pyarrow.StringArray | pyarrow.LargeStringArray, pyarrow.BooleanArray]: ...
@overload
def resolve_batch(
    bases: Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray,
    references: Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    non_strict: bool = False,
    fingerprints: Literal[True],
    reasons: Literal[False] = False,
) -> tuple[pyarrow.FixedSizeBinaryArray, pyarrow.BooleanArray]:
    """Each reference resolved against the base on its row, then normalized
    (``normalize --field 2 --base-field 1``): ``(result, valid)``."""

@overload
def key_batch(
    columns: Sequence[Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray],
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    delimiter: str = "\t",
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    fingerprints: bool = False,
    reasons: Literal[True],
) -> Explained: ...
@overload
def key_batch(
    columns: Sequence[Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray],
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    delimiter: str = "\t",
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    fingerprints: Literal[False] = False,
    reasons: Literal[False] = False,
) -> tuple[pyarrow.StringArray | pyarrow.LargeStringArray, pyarrow.BooleanArray]: ...
@overload
def key_batch(
    columns: Sequence[Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray],
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    delimiter: str = "\t",
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    fingerprints: Literal[True],
    reasons: Literal[False] = False,
) -> tuple[pyarrow.FixedSizeBinaryArray, pyarrow.BooleanArray]:
    """One key a row of several URI columns, each column's key joined by
    ``delimiter`` (``dedup --key-fields``): ``(result, valid)``."""

@overload
def normalize_batch(
    values: Iterable[str | None] | pyarrow.Array | pyarrow.ChunkedArray,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    base: str | None = None,
    non_strict: bool = False,
    reasons: Literal[True],
) -> Explained: ...
@overload
def normalize_batch(
    values: pyarrow.ChunkedArray,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    base: str | None = None,
    non_strict: bool = False,
    reasons: Literal[False] = False,
) -> tuple[pyarrow.ChunkedArray, pyarrow.ChunkedArray]: ...
@overload
def normalize_batch(
    values: pyarrow.DictionaryArray,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    base: str | None = None,
    non_strict: bool = False,
    reasons: Literal[False] = False,
) -> tuple[pyarrow.DictionaryArray, pyarrow.BooleanArray]: ...
@overload
def normalize_batch(
    values: pyarrow.LargeStringArray,
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    base: str | None = None,
    non_strict: bool = False,
    reasons: Literal[False] = False,
) -> tuple[pyarrow.LargeStringArray, pyarrow.BooleanArray]: ...
@overload
def normalize_batch(
    values: pyarrow.StringArray | Iterable[str | None],
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    threads: int | None = None,
    lenient: bool = False,
    base: str | None = None,
    non_strict: bool = False,
    reasons: Literal[False] = False,
) -> tuple[pyarrow.StringArray, pyarrow.BooleanArray]:
    """Normalize many values with the GIL released, on ``threads`` threads
    (by default one a core; the result is the same for any number):
    ``(result, valid)``, null in ``result`` and false in ``valid`` where a
    value was null or not a URI reference."""

def parse_duration(text: str) -> float:
    """``text`` as a length of time, in seconds, as every front end takes
    it (``"7d"``, ``"1h30m"``, ``"1day 12h"``); raises ValueError."""

def seen_config(
    rung: RungName | None = None,
    preset: PresetName | None = None,
    with_: Names = (),
    without: Names = (),
    tracking_params: Params | None = None,
    key: KeyName = "canonical",
    *,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
) -> dict[str, str]:
    """The key configuration a seen store of keys made with these options
    records: what ``urinorm seen export`` writes in a history's
    ``_urinorm.json``."""

class SeenStoreError(Exception):
    """A seen store could not be opened, read or written: another writer
    holds it, it was made with other key options, or a file of it is
    damaged (the message names which)."""

class SeenSet:
    """The keys a crawler frontier has admitted, kept in a seen store (the
    directory ``urinorm dedup --seen DIR`` uses)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        rung: RungName | None = None,
        preset: PresetName | None = None,
        with_: Names = (),
        without: Names = (),
        tracking_params: Params | None = None,
        key: KeyName = "canonical",
        wait: bool = False,
        *,
        rules: Paths | None = None,
        rules_clearurls: Paths | None = None,
        max_age: int | float | str | datetime.timedelta | None = None,
        now: datetime.datetime | float | None = None,
        budget_per_host: int | None = None,
        budget_per_domain: int | None = None,
    ) -> None: ...
    @property
    def capped(self) -> int: ...
    @overload
    def add(self, values: pyarrow.Array) -> pyarrow.BooleanArray: ...
    @overload
    def add(self, values: pyarrow.ChunkedArray) -> pyarrow.ChunkedArray: ...
    @overload
    def add(self, values: Iterable[str | None]) -> list[bool | None]: ...
    @overload
    def contains(self, values: pyarrow.Array) -> pyarrow.BooleanArray: ...
    @overload
    def contains(self, values: pyarrow.ChunkedArray) -> pyarrow.ChunkedArray: ...
    @overload
    def contains(self, values: Iterable[str | None]) -> list[bool | None]: ...
    def add_keys(self, keys: Iterable[bytes | str]) -> list[bool]: ...
    def commit(self) -> int: ...
    def close(self) -> None: ...
    def __len__(self) -> int: ...
    def __contains__(self, value: str) -> bool: ...
    def __enter__(self) -> SeenSet: ...
    def __exit__(self, kind: object, error: object, traceback: object) -> None: ...

class SeenServiceError(Exception):
    """``urinorm serve`` could not be reached, or refused a request."""

class SeenClient:
    """A seen set served by ``urinorm serve``, shared by every process of a
    crawl that asks the same service."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0) -> None: ...
    @overload
    def add(self, values: pyarrow.Array | pyarrow.ChunkedArray) -> pyarrow.BooleanArray: ...
    @overload
    def add(self, values: Iterable[str | None]) -> list[bool | None]: ...
    @overload
    def check(self, values: pyarrow.Array | pyarrow.ChunkedArray) -> pyarrow.BooleanArray: ...
    @overload
    def check(self, values: Iterable[str | None]) -> list[bool | None]: ...
    def verdicts(
        self, values: pyarrow.Array | pyarrow.ChunkedArray | Iterable[str | None], admit: bool = True
    ) -> list[str | None]: ...
    @overload
    def forget(self, values: pyarrow.Array | pyarrow.ChunkedArray) -> pyarrow.BooleanArray: ...
    @overload
    def forget(self, values: Iterable[str | None]) -> list[bool | None]: ...
    def stats(self) -> dict[str, object]: ...
    def close(self) -> None: ...
    def __enter__(self) -> SeenClient: ...
    def __exit__(self, *args: object) -> None: ...
