"""Spark columns of urinorm keys, computed by a vectorized UDF over Arrow batches.

The whole dedup job::

    from urinorm.spark import normalize_col

    df.withColumn("canonical", normalize_col("url", rung="scheme")).dropDuplicates(["canonical"])

Each executor runs :func:`urinorm.normalize_batch` on the Arrow batches
Spark sends, with the GIL released, so the keys are those ``urinorm
normalize`` prints. A value that is null or not a URI reference gets a null
key: ``dropDuplicates`` then keeps one row for all of them, so filter with
``F.col("canonical").isNotNull()`` to drop them (and ``isNull()`` to see them;
:func:`urinorm.normalize` on one says why).

Needs pyarrow (and pandas, which Spark's Arrow UDFs load); pyspark is the
cluster's own.
"""

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F

import urinorm
from urinorm._options import Names, names


def normalize_col(
    col: "Column | str",
    rung: "str | None" = None,
    preset: "str | None" = None,
    with_: "Names" = (),
    without: "Names" = (),
    tracking_params: "Names | None" = None,
    key: str = "canonical",
    udf: "str | None" = None,
) -> Column:
    """A string column of the keys of ``col``: canonical forms, or SURT keys.

    The options are those of :func:`urinorm.normalize_batch`; they are
    checked here, on the driver, so a misspelt transform fails at once
    rather than in every task. ``udf`` picks the kind of vectorized UDF:
    ``"arrow"`` (Spark 4.1+: Arrow arrays in and out, no pandas step) or
    ``"pandas"`` (Spark 3.0+: ``pandas_udf``, converted to Arrow and back);
    by default the first that this pyspark has.
    """
    options = {
        "rung": rung,
        "preset": preset,
        "with_": names(with_),
        "without": names(without),
        "tracking_params": names(tracking_params),
        "key": key,
    }
    urinorm.normalize_batch([], **options)
    if udf is None:
        udf = "arrow" if hasattr(F, "arrow_udf") else "pandas"
    if udf == "arrow":
        return _arrow_udf(options)(col)
    if udf == "pandas":
        return _pandas_udf(options)(col)
    raise ValueError(f"unknown udf '{udf}' (choose arrow or pandas)")


def _arrow_udf(options):
    @F.arrow_udf("string")
    def urinorm_key(values: pa.Array) -> pa.Array:
        return urinorm.normalize_batch(values, **options)[0]

    return urinorm_key


def _pandas_udf(options):
    import pandas as pd

    @F.pandas_udf("string")
    def urinorm_key(values: pd.Series) -> pd.Series:
        # Spark hands pandas strings; Arrow is what normalize_batch reads in place.
        array = pa.array(values, type=pa.string(), from_pandas=True)
        return urinorm.normalize_batch(array, **options)[0].to_pandas()

    return urinorm_key
