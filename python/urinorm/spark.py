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
from urinorm._options import Names, Paths, of_texts, shipped


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
) -> Column:
    """A string column of the keys of ``col``: canonical forms, or SURT keys.

    The options are those of :func:`urinorm.normalize_batch`; they are
    checked here, on the driver, so a misspelt transform or a bad rules
    file fails at once rather than in every task. The site rules files
    (``rules``, ``rules_clearurls``) are read here, on the driver, and their
    texts go to the executors with the UDF: the executors need not see the
    driver's files, and every task applies the rules as they were when the
    column was made. ``udf`` picks the kind of vectorized UDF: ``"arrow"``
    (Spark 4.1+: Arrow arrays in and out, no pandas step) or ``"pandas"``
    (Spark 3.0+: ``pandas_udf``, converted to Arrow and back); by default
    the first that this pyspark has.
    """
    options = _options(rung, preset, with_, without, tracking_params, rules, rules_clearurls, key)

    def keys(values: pa.Array) -> pa.Array:
        # A task has its core: one thread.
        return urinorm._run_batch(
            "normalize_batch", values, of_texts(**options), key, threads=1
        )[0]

    return _column(col, udf, "string", keys)


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
) -> Column:
    """A binary column of the 16-byte fingerprints of the keys of ``col``
    (null where the value is null or not a URI reference).

    The options are :func:`normalize_col`'s, checked on the driver (and
    the rules files read there).
    """
    options = _options(rung, preset, with_, without, tracking_params, rules, rules_clearurls, key)

    def fingerprints(values: pa.Array) -> pa.Array:
        normalizer = of_texts(**options)
        result, _ = urinorm._run_batch(
            "fingerprint_batch", values, normalizer, key, fingerprints=True, threads=1
        )
        # Spark's binary type is variable-width: the fixed-width array is cast.
        return result.cast(pa.binary())

    return _column(col, udf, "binary", fingerprints)


def _options(rung, preset, with_, without, tracking_params, rules, rules_clearurls, key) -> dict:
    """The options as :func:`urinorm._options.of_texts` takes them, the
    rules files read (their texts), checked here with ``key``."""
    options = shipped(rung, preset, with_, without, tracking_params, rules, rules_clearurls)
    # A bad key fails on the driver too.
    urinorm._run_batch("normalize_batch", [], of_texts(**options), key)
    return options


def _column(col, udf: "str | None", spark_type: str, batch) -> Column:
    """``batch`` (an Arrow string array to an Arrow array) as a Spark
    column of ``spark_type``, through the kind of vectorized UDF ``udf``
    names: ``"arrow"`` (Spark 4.1+: Arrow arrays in and out) or
    ``"pandas"`` (Spark 3.0+); by default the first this pyspark has."""
    if udf is None:
        udf = "arrow" if hasattr(F, "arrow_udf") else "pandas"
    if udf == "arrow":
        return _arrow_udf(spark_type, batch)(col)
    if udf == "pandas":
        return _pandas_udf(spark_type, batch)(col)
    raise ValueError(f"unknown udf '{udf}' (choose arrow or pandas)")


def _arrow_udf(spark_type: str, batch):
    @F.arrow_udf(spark_type)
    def urinorm_key(values: pa.Array) -> pa.Array:
        return batch(values)

    return urinorm_key


def _pandas_udf(spark_type: str, batch):
    import pandas as pd

    @F.pandas_udf(spark_type)
    def urinorm_key(values: pd.Series) -> pd.Series:
        # Spark hands pandas strings; Arrow is what the batch reads in place.
        return batch(pa.array(values, type=pa.string(), from_pandas=True)).to_pandas()

    return urinorm_key
