"""The options every function of urinorm takes, made into a cached normalizer.

Only names are handled here; what they mean (the default rung, a preset
plus and minus transforms) is decided by the Rust library, as for the
command line.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from ._urinorm import Normalizer

#: One name, or several.
Names = str | Iterable[str]


def names(given: Names | None) -> tuple[str, ...] | None:
    """``given`` as a tuple of names (hashable, for the cache)."""
    # One name is a str, and a str is also an iterable of one-letter names.
    if given is None:
        return None
    if isinstance(given, str):
        return (given,)
    return tuple(given)


# Built once per set of options: building a normalizer parses the names and
# copies the tracking list, which costs more than normalizing a URI.
@lru_cache(maxsize=64)
def _cached(rung, preset, with_, without, tracking_params) -> Normalizer:
    return Normalizer(rung, preset, names(with_), names(without), names(tracking_params))


def normalizer(
    rung: str | None,
    preset: str | None,
    with_: Names,
    without: Names,
    tracking_params: Names | None,
) -> Normalizer:
    """The normalizer for these options; ValueError for an unknown name or
    protocol options under a lower rung."""
    try:
        # The options as given are the key when they can be (str, tuple,
        # None): one call then costs a dictionary look-up.
        return _cached(rung, preset, with_, without, tracking_params)
    except TypeError:
        # A list is no key: as a tuple it is.
        return _cached(rung, preset, names(with_), names(without), names(tracking_params))
