"""The options every function of urinorm takes, made into a cached normalizer.

Only names and files are handled here; what they mean (the default rung, a
preset plus and minus transforms, the site rules) is decided by the Rust
library, as for the command line.

Site rules files are read here, in Python, and their texts handed to the
extension: a normalizer built from paths is cached on each file's
``(path, inode, st_mtime_ns, st_size)``, looked up again (one ``os.stat``
a file) on every call, so a file that changes is read and compiled again
rather than served stale. A normalizer built from texts (what
:mod:`urinorm.spark` ships to its executors) is cached on the texts.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from functools import lru_cache

from ._urinorm import Normalizer, RulesError, check_options

#: One name, or several.
Names = str | Iterable[str]
#: One path, or several.
Paths = str | os.PathLike | Iterable[str | os.PathLike]
#: The rules files' texts, as the extension takes them: ``(rules,
#: rules_clearurls)``, each a tuple of ``(name, text)`` pairs.
Texts = tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]


#: A length of time: seconds, a ``timedelta``, or text as the command line
#: takes it (``"7d"``, ``"12h"``, ``"30m"``, ``"45s"``, ``"2w"``).
Duration = int | float | str | timedelta

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def seconds(given: Duration | None) -> float | None:
    """``given`` in seconds; ValueError when it is not a length of time."""
    if given is None:
        return None
    if isinstance(given, timedelta):
        return given.total_seconds()
    if isinstance(given, str):
        text = given.strip()
        unit = _UNITS.get(text[-1:], None)
        number = text[:-1] if unit else text
        try:
            value = float(number) * (unit or 1)
        except ValueError:
            raise ValueError(
                f"{given!r} is not a length of time: give seconds, or a number and s, m, h, d or w ('7d')"
            ) from None
        return value
    return float(given)


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


def read_rules(path: str) -> str:
    """The whole text of a rules file, as the command line reads it (UTF-8,
    line endings untouched): OSError naming the path when it cannot be
    read, RulesError when it is not UTF-8."""
    with open(path, "rb") as file:
        data = file.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        problem = f"not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})"
        error = RulesError(f"{path}:{line}: {problem}")
        error.file, error.line, error.problem = path, line, problem
        raise error from None


def rules_texts(rules: Paths | None, rules_clearurls: Paths | None) -> Texts:
    """The texts of the rules files, read now: what :func:`of_texts` takes."""
    return (
        tuple((p, read_rules(p)) for p in paths(rules)),
        tuple((p, read_rules(p)) for p in paths(rules_clearurls)),
    )


# Built once per set of options: building a normalizer parses the names and
# copies the tracking list, which costs more than normalizing a URI.
@lru_cache(maxsize=64)
def _cached(rung, preset, with_, without, tracking_params) -> Normalizer:
    return Normalizer(rung, preset, names(with_), names(without), names(tracking_params))


# Fewer with rules: each holds its compiled rules (ClearURLs' whole list is
# hundreds of regular expressions), and a file edited now and then leaves
# its old versions here until they are pushed out.
@lru_cache(maxsize=8)
def _cached_texts(rung, preset, with_, without, tracking_params, texts: Texts) -> Normalizer:
    return Normalizer(rung, preset, with_, without, tracking_params, texts)


@lru_cache(maxsize=8)
def _cached_files(rung, preset, with_, without, tracking_params, stamps) -> Normalizer:
    # `stamps` is only the key: the files are read now, after their stat.
    rules = tuple(path for path, *_ in stamps[0])
    rules_clearurls = tuple(path for path, *_ in stamps[1])
    texts = rules_texts(rules, rules_clearurls)
    return _cached_texts.__wrapped__(rung, preset, with_, without, tracking_params, texts)


def _stamp(path: str) -> tuple:
    status = os.stat(path)
    return (path, status.st_ino, status.st_mtime_ns, status.st_size)


#: The keys of a frontier when no option names a rung or a transform: the
#: safe preset with sort-query-pairs, as ``urinorm serve``, ``dedup --seen``
#: and ``seen add`` make them (the engine's ``FRONTIER_PRESET`` and
#: ``FRONTIER_WITH``, in ``src/line/mod.rs``; a test holds the two alike).
FRONTIER_PRESET = "safe"
FRONTIER_WITH = ("sort-query-pairs",)


def frontier_normalizer(
    rung: str | None,
    preset: str | None,
    with_: Names,
    without: Names,
    tracking_params: Names | None,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
) -> Normalizer:
    """The normalizer of a frontier's keys: as :func:`normalizer`, or
    the frontier's default when no option names a rung or a transform."""
    chosen = rung or preset or names(with_) or names(without) or tracking_params
    if not (chosen or paths(rules) or paths(rules_clearurls)):
        preset, with_ = FRONTIER_PRESET, FRONTIER_WITH
    return normalizer(rung, preset, with_, without, tracking_params, rules, rules_clearurls)


def normalizer(
    rung: str | None,
    preset: str | None,
    with_: Names,
    without: Names,
    tracking_params: Names | None,
    rules: Paths | None = None,
    rules_clearurls: Paths | None = None,
) -> Normalizer:
    """The normalizer for these options; ValueError for an unknown name or
    protocol options under a lower rung, RulesError (a ValueError) for a
    rules file that cannot be used, OSError for one that cannot be read."""
    if rules is None and rules_clearurls is None:
        try:
            # The options as given are the key when they can be (str, tuple,
            # None): one call then costs a dictionary look-up.
            return _cached(rung, preset, with_, without, tracking_params)
        except TypeError:
            # A list is no key: as a tuple it is.
            return _cached(rung, preset, names(with_), names(without), names(tracking_params))
    options = (rung, preset, names(with_) or (), names(without) or (), names(tracking_params))
    given = (paths(rules), paths(rules_clearurls))
    if given == ((), ()):
        return normalizer(*options)
    try:
        stamps = (tuple(map(_stamp, given[0])), tuple(map(_stamp, given[1])))
        return _cached_files(*options, stamps)
    except OSError:
        # A mistake in the options is told first, as the command line
        # tells it before it opens any file.
        check_options(*options, rules=True)
        raise


def of_texts(
    rung: str | None,
    preset: str | None,
    with_: Names,
    without: Names,
    tracking_params: Names | None,
    texts: Texts = ((), ()),
) -> Normalizer:
    """The normalizer for these options and rules texts (from
    :func:`rules_texts`), cached on them."""
    options = (rung, preset, names(with_) or (), names(without) or (), names(tracking_params))
    if texts == ((), ()):
        return normalizer(*options)
    return _cached_texts(*options, texts)


def shipped(
    rung: str | None,
    preset: str | None,
    with_: Names,
    without: Names,
    tracking_params: Names | None,
    rules: Paths | None,
    rules_clearurls: Paths | None,
) -> dict:
    """The options as :func:`of_texts` takes them, with the rules files
    read (``texts``): what an expression or a UDF carries to where it runs.
    Checked here: a mistake in the options is told before a file that
    cannot be read, and the normalizer is built (and cached), so that a bad
    rules file fails now rather than where it runs."""
    options = {
        "rung": rung,
        "preset": preset,
        "with_": names(with_) or (),
        "without": names(without) or (),
        "tracking_params": names(tracking_params),
    }
    rules, rules_clearurls = paths(rules), paths(rules_clearurls)
    check_options(**options, rules=bool(rules or rules_clearurls))
    options["texts"] = rules_texts(rules, rules_clearurls)
    of_texts(**options)
    return options
