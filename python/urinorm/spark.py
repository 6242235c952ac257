"""Spark columns of urinorm keys and their fingerprints, computed by a
vectorized UDF over Arrow batches.

The whole dedup job::

    from urinorm.spark import normalize_col

    df.withColumn("canonical", normalize_col("url", rung="scheme")).dropDuplicates(["canonical"])

Each executor runs :func:`urinorm.normalize_batch` on the Arrow batches
Spark sends, with the GIL released, so the keys are those ``urinorm
normalize`` prints. A value that is null or not a URI reference gets a null
key: ``dropDuplicates`` then keeps one row for all of them, so filter with
``F.col("canonical").isNotNull()`` to drop them (and ``isNull()`` to see them;
:func:`urinorm.normalize` on one says why).

:func:`fingerprint_col` gives each key's 16-byte fingerprint (the bytes of
:func:`urinorm.fingerprint` and of the seen store), so a frontier's history
can be a Parquet column of them, anti-joined with each new batch
(``scripts/spark_frontier.py``).

Needs pyarrow (and pandas, which Spark's Arrow UDFs load); pyspark is the
cluster's own.
"""

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F

import urinorm
from urinorm._options import Names, Paths, of_shipped, shipped


def normalize_col(
    col: "Column | str",
    rung: "str | None" = None,
    preset: "str | None" = None,
    with_: "Names" = (),
    without: "Names" = (),
    tracking_params: "Names | None" = None,
    key: str = "canonical",
    udf: "str | None" = None,
    *,
    rules: "Paths | None" = None,
    rules_clearurls: "Paths | None" = None,
    lenient: bool = False,
) -> Column:
    """A string column of the keys of ``col``: canonical forms, or SURT keys.

    The options are those of :func:`urinorm.normalize_batch`; they are
    checked here, on the driver, so a misspelt transform or a bad rules
    file fails at once rather than in every task. The site rules files
    (``rules``, ``rules_clearurls``) are read here, on the driver, and their
    texts go to the executors with the UDF: the executors need not see the
    driver's files, and every task applies the rules as they were when the
    column was made. ``lenient`` repairs each value first, as
    :func:`urinorm.normalize` does. ``udf`` picks the kind of vectorized
    UDF: ``"arrow"`` (Spark 4.1+: Arrow arrays in and out, no pandas step)
    or ``"pandas"`` (Spark 3.0+: ``pandas_udf``, converted to Arrow and
    back); by default the first that this pyspark has.
    """
    spec = shipped(rung, preset, with_, without, tracking_params, rules, rules_clearurls, key, lenient)
    reading = {"lenient": lenient}

    def keys(values: pa.Array) -> pa.Array:
        # A task has its core: one thread.
        made = urinorm._run_batch("normalize_batch", values, of_shipped(spec), key, threads=1, reading=reading)
        return made[0]

    return _column([col], udf, "string", keys)


def fingerprint_col(
    col: "Column | str",
    rung: "str | None" = None,
    preset: "str | None" = None,
    with_: "Names" = (),
    without: "Names" = (),
    tracking_params: "Names | None" = None,
    key: str = "canonical",
    udf: "str | None" = None,
    *,
    rules: "Paths | None" = None,
    rules_clearurls: "Paths | None" = None,
    lenient: bool = False,
) -> Column:
    """A binary column of the 16-byte fingerprints of the keys of ``col``
    (null where the value is null or not a URI reference).

    The options are :func:`normalize_col`'s, checked on the driver (and
    the rules files read there).
    """
    spec = shipped(rung, preset, with_, without, tracking_params, rules, rules_clearurls, key, lenient)
    reading = {"lenient": lenient}

    def fingerprints(values: pa.Array) -> pa.Array:
        normalizer = of_shipped(spec)
        result, _ = urinorm._run_batch(
            "fingerprint_batch", values, normalizer, key, fingerprints=True, threads=1, reading=reading
        )
        # Spark's binary type is variable-width: the fixed-width array is cast.
        return result.cast(pa.binary())

    return _column([col], udf, "binary", fingerprints)


def resolve_col(
    bases: "Column | str",
    references: "Column | str",
    rung: "str | None" = None,
    preset: "str | None" = None,
    with_: "Names" = (),
    without: "Names" = (),
    tracking_params: "Names | None" = None,
    key: str = "canonical",
    udf: "str | None" = None,
    *,
    rules: "Paths | None" = None,
    rules_clearurls: "Paths | None" = None,
    lenient: bool = False,
    non_strict: bool = False,
) -> Column:
    """A string column of each reference resolved against the base on its
    row, then normalized: a link dataset's ``(page, href)`` columns made
    keys, as :func:`urinorm.resolve_batch` makes them (the bases first, as
    there). ``lenient`` repairs the reference and its base; ``non_strict``
    reads a reference with the base's scheme as relative (RFC 3986 §5.2.2).
    The other options are :func:`normalize_col`'s.
    """
    spec = shipped(rung, preset, with_, without, tracking_params, rules, rules_clearurls, key, lenient, non_strict)
    reading = {"lenient": lenient, "non_strict": non_strict}

    def keys(base_values: pa.Array, reference_values: pa.Array) -> pa.Array:
        made = urinorm._resolve(
            pa, "resolve_col", of_shipped(spec), base_values, reference_values, key, False, 1, reading
        )
        return made[0]

    return _column([bases, references], udf, "string", keys)


def _column(cols, udf: "str | None", spark_type: str, batch) -> Column:
    """``batch`` (Arrow string arrays, one a column, to an Arrow array) as
    a Spark column of ``spark_type``, through the kind of vectorized UDF
    ``udf`` names: ``"arrow"`` (Spark 4.1+: Arrow arrays in and out) or
    ``"pandas"`` (Spark 3.0+); by default the first this pyspark has."""
    if udf is None:
        udf = "arrow" if hasattr(F, "arrow_udf") else "pandas"
    if udf == "arrow":
        return _arrow_udf(spark_type, batch, len(cols))(*cols)
    if udf == "pandas":
        return _pandas_udf(spark_type, batch, len(cols))(*cols)
    raise ValueError(f"unknown udf '{udf}' (choose arrow or pandas)")


def _arrow_udf(spark_type: str, batch, columns: int):
    if columns == 1:

        def urinorm_key(values: pa.Array) -> pa.Array:
            return batch(values)

    else:

        def urinorm_key(bases: pa.Array, references: pa.Array) -> pa.Array:
            return batch(bases, references)

    return F.arrow_udf(spark_type)(urinorm_key)


def _pandas_udf(spark_type: str, batch, columns: int):
    import pandas as pd

    def arrow(values: pd.Series) -> pa.Array:
        # Spark hands pandas strings; Arrow is what the batch reads in place.
        return pa.array(values, type=pa.string(), from_pandas=True)

    if columns == 1:

        def urinorm_key(values: pd.Series) -> pd.Series:
            return batch(arrow(values)).to_pandas()

    else:

        def urinorm_key(bases: pd.Series, references: pd.Series) -> pd.Series:
            return batch(arrow(bases), arrow(references)).to_pandas()

    return F.pandas_udf(spark_type)(urinorm_key)
