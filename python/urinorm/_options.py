"""The options every function of urinorm takes, made into a cached normalizer.

Only Python's types are mapped here (one name or several, one path or
several, a ``timedelta``); what each option means, the frontier's default,
the order the rules files apply in, reading those files and every refusal
are the Rust library's options model (``urinorm::line::spec``), which the
command line, the Polars plugin and the DuckDB extension map onto too.

A normalizer built from rules files is cached on each file's ``(path,
inode, st_mtime_ns, st_size)``, looked up again (one ``os.stat`` a file)
on every call, so a file that changes is read and compiled again rather
than served stale. A normalizer shipped to where it runs (a Polars
expression, a Spark executor) carries the texts of its files, read once.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from functools import lru_cache

from ._urinorm import FRONTIER_PRESET, Normalizer
from ._urinorm import FRONTIER_WITH as _FRONTIER_WITH

#: One name, or several.
Names = str | Iterable[str]
#: One path, or several.
Paths = str | os.PathLike | Iterable[str | os.PathLike]
#: A length of time: seconds, a ``timedelta``, or text as the command line
#: takes it (``"7d"``, ``"1h30m"``, ``"90s"``, ``"2w"``).
Duration = int | float | str | timedelta

#: The keys of a frontier when no option names a rung or a transform: the
#: ``FRONTIER_PRESET`` preset with these transforms (the engine's own).
FRONTIER_WITH: tuple[str, ...] = tuple(_FRONTIER_WITH)

__all__ = ["FRONTIER_PRESET", "FRONTIER_WITH"]


def seconds(given: Duration | None) -> float | str | None:
    """``given`` as the extension takes a length of time: seconds, or the
    text it parses as the command line does."""
    if isinstance(given, timedelta):
        return given.total_seconds()
    return given


def epoch_seconds(given: datetime | float | None) -> float | None:
    """A time as seconds since the epoch (a naive ``datetime`` is UTC)."""
    if given is None or not isinstance(given, datetime):
        return given
    if given.tzinfo is None:
        given = given.replace(tzinfo=timezone.utc)
    return given.timestamp()


def names(given: Names | None) -> tuple[str, ...] | None:
    """``given`` as a tuple of names (hashable, for the cache)."""
    # One name is a str, and a str is also an iterable of one-letter names.
    if given is None:
        return None
    if isinstance(given, str):
        return (given,)
    return tuple(given)


def paths(given: Paths | None) -> tuple[str, ...]:
    """``given`` as a tuple of paths, each as written (``str``); no path is
    an empty tuple."""
    if given is None:
        return ()
    if isinstance(given, str):
        return (given,)
    if isinstance(given, (bytes, os.PathLike)):
        given = (given,)
    return tuple(p if isinstance(p, str) else os.fsdecode(os.fspath(p)) for p in given)


# Built once per set of options: building a normalizer parses the names and
# copies the tracking list, which costs more than normalizing a URI.
@lru_cache(maxsize=64)
def _cached(rung, preset, with_, without, tracking_params, frontier) -> Normalizer:
    return Normalizer(
        rung, preset, names(with_) or [], names(without) or [], _list(names(tracking_params)), frontier=frontier
    )


# Fewer with rules: each holds its compiled rules (ClearURLs' whole list is
# hundreds of regular expressions), and a file edited now and then leaves
# its old versions here until they are pushed out.
@lru_cache(maxsize=8)
def _cached_files(rung, preset, with_, without, tracking_params, frontier, stamps) -> Normalizer:
    # `stamps` is only the key: the files are read now, after their stat.
    return _with_files(rung, preset, with_, without, tracking_params, frontier, stamps)


def _with_files(rung, preset, with_, without, tracking_params, frontier, files) -> Normalizer:
    rules, rules_clearurls = ([path for path, *_ in given] for given in files)
    return Normalizer(
        rung, preset, list(with_), list(without), _list(tracking_params),
        rules=rules, rules_clearurls=rules_clearurls, frontier=frontier,
    )  # fmt: skip


def _list(given: tuple[str, ...] | None) -> list[str] | None:
    return None if given is None else list(given)


def _stamp(path: str) -> tuple:
    status = os.stat(path)
    return (path, status.st_ino, status.st_mtime_ns, status.st_size)


def normalizer(
    rung: str | None,
    preset: str | None,
    with_: Names,
    without: Names,
    tracking_params: Names | None,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
    frontier: bool = False,
) -> Normalizer:
    """The normalizer for these options (a frontier's default when
    ``frontier`` and none names a rung); ValueError for an unknown name or
    protocol options under a lower rung, RulesError (a ValueError) for a
    rules file that cannot be used, OSError for one that cannot be read."""
    if rules is None and rules_clearurls is None:
        try:
            # The options as given are the key when they can be (str, tuple,
            # None): one call then costs a dictionary look-up.
            return _cached(rung, preset, with_, without, tracking_params, frontier)
        except TypeError:
            # A list is no key: as a tuple it is.
            return _cached(rung, preset, names(with_), names(without), names(tracking_params), frontier)
    options = (rung, preset, names(with_) or (), names(without) or (), names(tracking_params), frontier)
    given = (paths(rules), paths(rules_clearurls))
    if given == ((), ()):
        return _cached(*options)
    try:
        stamps = (tuple(map(_stamp, given[0])), tuple(map(_stamp, given[1])))
    except OSError:
        # Not cached: the extension tells a mistake in the options first,
        # as the command line does, then the file it cannot read.
        return _with_files(*options, ([(p,) for p in given[0]], [(p,) for p in given[1]]))
    return _cached_files(*options, stamps)


@lru_cache(maxsize=8)
def of_shipped(shipped: str) -> Normalizer:
    """The normalizer of options :func:`shipped` made, cached on them."""
    return Normalizer.of_shipped(shipped)


def shipped(
    rung: str | None,
    preset: str | None,
    with_: Names,
    without: Names,
    tracking_params: Names | None,
    rules: Paths | None,
    rules_clearurls: Paths | None,
    key: str = "canonical",
    lenient: bool = False,
    non_strict: bool = False,
) -> str:
    """The options with the rules files read (their texts) and how each
    value is read: what an expression or a UDF carries to where it runs
    (:func:`of_shipped` makes the normalizer there). Built here, so a
    mistake or a bad rules file fails now rather than where it runs."""
    made = normalizer(rung, preset, with_, without, tracking_params, rules, rules_clearurls)
    return made.shipped(key, lenient, non_strict)
