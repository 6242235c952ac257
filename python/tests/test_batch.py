"""normalize_batch: lists and Arrow arrays in, a string array and its
validity mask out, nulls where a value was null or not a URI reference."""

import gc
import sys
import threading
from functools import partial

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import urinorm

VALUES = ["HTTP://A/%7e", None, "http://exa mple.com/", "http://b", "", "x:y", "http://a/b%zz"]
EXPECTED = ["http://a/~", None, None, "http://b/", "", "x:y", None]


def check(result, valid, expected=EXPECTED):
    assert result.to_pylist() == expected
    assert valid.to_pylist() == [v is not None for v in expected]
    assert valid.null_count == 0
    assert valid.equals(result.is_valid())


def test_list():
    result, valid = urinorm.normalize_batch(VALUES)
    assert result.type == pa.string()
    assert isinstance(valid, pa.BooleanArray)
    check(result, valid)


def test_any_iterable():
    result, valid = urinorm.normalize_batch(iter(VALUES))
    check(result, valid)
    result, valid = urinorm.normalize_batch(tuple(VALUES))
    check(result, valid)


@pytest.mark.parametrize("type_", [pa.string(), pa.large_string()])
def test_arrow_arrays_keep_their_offset_width(type_):
    result, valid = urinorm.normalize_batch(pa.array(VALUES, type=type_))
    assert result.type == type_
    check(result, valid)


@pytest.mark.parametrize("type_", [pa.string(), pa.large_string()])
def test_sliced_arrays_are_read_from_their_offset(type_):
    array = pa.array(VALUES * 3, type=type_)
    for start in range(len(VALUES) * 2):
        for length in (0, 1, 5, len(VALUES)):
            result, valid = urinorm.normalize_batch(array.slice(start, length))
            expected = (EXPECTED * 3)[start : start + length]
            check(result, valid, expected)


def test_an_array_without_nulls_has_no_validity_buffer():
    array = pa.array(["http://A", "http://b/"])
    assert array.buffers()[0] is None
    result, valid = urinorm.normalize_batch(array)
    check(result, valid, ["http://a/", "http://b/"])


def test_chunked_arrays_give_chunked_results_chunk_for_chunk():
    chunked = pa.chunked_array([VALUES[:3], [], VALUES[3:]], type=pa.large_string())
    result, valid = urinorm.normalize_batch(chunked)
    assert isinstance(result, pa.ChunkedArray) and isinstance(valid, pa.ChunkedArray)
    assert result.type == pa.large_string()
    assert [len(c) for c in result.chunks] == [3, 0, 4]
    assert [len(c) for c in valid.chunks] == [3, 0, 4]
    check(result.combine_chunks(), valid.combine_chunks())


def test_empty_inputs():
    for values in ([], pa.array([], type=pa.string()), pa.array([], type=pa.large_string())):
        result, valid = urinorm.normalize_batch(values)
        assert len(result) == 0 and len(valid) == 0


def test_all_null():
    result, valid = urinorm.normalize_batch(pa.array([None, None], type=pa.string()))
    check(result, valid, [None, None])


def test_surt_keys():
    result, valid = urinorm.normalize_batch(
        pa.array(["http://www.Example.com:80/a?b", None, "http:// bad"]), key="surt"
    )
    check(result, valid, ["com,example,www)/a?b", None, None])


def test_options_are_those_of_normalize():
    values = ["http://www.example.com/index.html?utm_source=x#a", "http://WWW.example.com/"]
    for options in ({"rung": "syntax"}, {"preset": "aggressive"}, {"with_": "strip-www"}):
        result, _ = urinorm.normalize_batch(values, **options)
        assert result.to_pylist() == [urinorm.normalize(v, **options) for v in values]


def test_the_mask_filters_the_keys():
    result, valid = urinorm.normalize_batch(pa.array(VALUES))
    assert pc.filter(result, valid).to_pylist() == [v for v in EXPECTED if v is not None]
    assert valid.to_numpy(zero_copy_only=False).tolist() == [v is not None for v in EXPECTED]


def test_results_longer_than_inputs():
    # Canonical forms can be longer than their inputs (here, the empty path
    # written as `/`): the buffers grow past the input's size.
    values = pa.array(["http://example.com"] * 10_000)
    result, _ = urinorm.normalize_batch(values)
    assert result.to_pylist() == ["http://example.com/"] * 10_000
    assert len(result.buffers()[2]) > len(values.buffers()[2])


def test_wrong_types_raise_type_error():
    with pytest.raises(TypeError, match="str or None items, not <class 'bytes'>"):
        urinorm.normalize_batch(["http://a/", b"http://b/"])
    with pytest.raises(TypeError, match="array of strings .* not int64"):
        urinorm.normalize_batch(pa.array([1, 2]))
    with pytest.raises(TypeError, match="array of strings .* not dictionary<values=int64"):
        urinorm.normalize_batch(pa.array([1, 2]).dictionary_encode())
    with pytest.raises(TypeError):
        urinorm.normalize_batch(42)


def test_string_views_read_as_large_strings():
    result, valid = urinorm.normalize_batch(pa.array(VALUES, type=pa.string_view()))
    assert result.type == pa.large_string()
    check(result, valid)


def test_a_dictionary_is_normalized_once_and_keeps_its_indices():
    array = pa.array(VALUES * 50).dictionary_encode()
    result, valid = urinorm.normalize_batch(array)
    assert pa.types.is_dictionary(result.type)
    assert result.indices.equals(array.indices)
    assert len(result.dictionary) == len(array.dictionary)
    assert result.to_pylist() == EXPECTED * 50
    assert valid.to_pylist() == [v is not None for v in EXPECTED * 50]
    prints = urinorm.fingerprint_batch(array)
    assert prints.type == pa.binary(16)
    assert prints.equals(urinorm.fingerprint_batch(VALUES * 50))


def test_null_arrays_give_nulls():
    for values in (pa.nulls(3), pa.chunked_array([pa.nulls(2), pa.nulls(1)])):
        result, valid = urinorm.normalize_batch(values)
        assert result.to_pylist() == [None] * 3
        assert valid.to_pylist() == [False] * 3
        assert urinorm.fingerprint_batch(values).to_pylist() == [None] * 3


class ArrowExporter:
    """Only the Arrow PyCapsule interface, as Polars or DuckDB export it."""

    def __init__(self, data, stream):
        self.data = data
        if stream:
            self.__arrow_c_stream__ = data.__arrow_c_stream__
        else:
            self.__arrow_c_array__ = data.__arrow_c_array__


@pytest.mark.parametrize("stream", [False, True])
def test_any_arrow_capsule_exporter(stream):
    data = pa.chunked_array([VALUES]) if stream else pa.array(VALUES)
    result, valid = urinorm.normalize_batch(ArrowExporter(data, stream))
    if stream:
        result, valid = result.combine_chunks(), valid.combine_chunks()
    check(result, valid)


def test_pandas_nulls_of_every_kind():
    pd = pytest.importorskip("pandas")
    for series in (
        pd.Series(["HTTP://A/%7e", None, float("nan"), "http://b"], dtype=object),
        pd.Series(["HTTP://A/%7e", pd.NA, None, "http://b"], dtype="string"),
        pd.Series(["HTTP://A/%7e", None, None, "http://b"], dtype="string[pyarrow]"),
    ):
        result, valid = urinorm.normalize_batch(series)
        check(result, valid, ["http://a/~", None, None, "http://b/"])


@pytest.mark.parametrize("fingerprints", [False, True])
def test_any_number_of_threads_gives_the_same_result(fingerprints):
    def run(values, threads):
        if fingerprints:
            return [urinorm.fingerprint_batch(values, threads=threads)]
        return list(urinorm.normalize_batch(values, threads=threads))

    # Pieces of uneven lengths, nulls and invalid values among them.
    values = [f"HTTP://h{i % 977}.example/{'%7e' * (i % 5)}" if i % 11 else None for i in range(50_001)]
    values[7] = "http://exa mple/"
    for source in (values, pa.array(values), pa.array(values, type=pa.large_string())):
        one = run(source, threads=1)
        assert one[0].null_count == 50_001 // 11 + 2
        for threads in (2, 3, 8, None):
            assert all(a.equals(b) for a, b in zip(run(source, threads), one, strict=True))
    with pytest.raises(ValueError, match="threads must be at least 1"):
        run(values, threads=0)


def test_bad_options_raise_value_error():
    with pytest.raises(ValueError, match="unknown key 'cdx' \\(choose canonical, surt, host or domain\\)"):
        urinorm.normalize_batch(["http://a/"], key="cdx")
    with pytest.raises(ValueError, match="unknown rung"):
        urinorm.normalize_batch(pa.array(["http://a/"]), rung="best")


class Exported:
    """An array already exported through the Arrow C data interface."""

    def __init__(self, array):
        self.capsules = array.__arrow_c_array__()

    def __arrow_c_array__(self, requested_schema=None):
        return self.capsules


@pytest.mark.parametrize("path", ["list", "arrow"])
def test_other_threads_run_while_a_batch_does(path):
    """The loop runs without the GIL: another Python thread runs meanwhile.

    With a switch interval longer than the test, a thread holding the GIL
    keeps it until it blocks or releases it itself. The other thread is
    woken just before the batch and needs the GIL to record whether the
    batch is running: had the loop kept the GIL, the first moment it could
    record anything would be when this thread blocks in `join`, after the
    batch, and it would record False. No clock decides the outcome; a call
    the other thread misses (a batch shorter than its wake-up) is repeated,
    a bounded number of times.

    The batch is the normalizer method normalize_batch calls, not
    normalize_batch itself: pyarrow releases the GIL for a moment while it
    exports an array or builds the result's, which the other thread could
    take for the loop's release. So the array is exported before (the method
    reads it through the Arrow C data interface, as normalize_batch has it),
    and the result is left unwrapped.
    """
    if not getattr(sys, "_is_gil_enabled", lambda: True)():
        pytest.skip("a free-threaded interpreter has no GIL to release")
    values = ["HTTP://Example.com:80/a/./b/../c%7e?q#f"] * 200_000
    normalizer = urinorm.Normalizer()
    if path == "list":
        batch = partial(normalizer.batch_list, values, "canonical")
    else:
        batch = partial(normalizer.batch_arrow, Exported(pa.array(values)), "canonical")
    state = {"in_batch": False}
    woken = threading.Event()
    seen = []

    def observe():
        woken.wait()
        seen.append(state["in_batch"])

    switch_interval = sys.getswitchinterval()
    # Long enough that no forced switch happens while the test runs; not
    # endless, so a thread that never blocks cannot hang the suite.
    sys.setswitchinterval(60)
    # A collection could run finalizers, and a finalizer may release the GIL.
    gc.collect()
    gc.disable()
    observer = threading.Thread(target=observe)
    try:
        # start() returns once the observer has blocked in wait(): with this
        # interval it keeps the GIL until then.
        observer.start()
        woken.set()
        for _ in range(20):
            state["in_batch"] = True
            batch()
            state["in_batch"] = False
            if seen:
                break
    finally:
        gc.enable()
        sys.setswitchinterval(switch_interval)
        woken.set()
        observer.join(timeout=120)
    assert not observer.is_alive(), "the observer never got the GIL"
    assert seen == [True], "the other thread ran only after the batch: it keeps the GIL"


def test_fingerprint_batch_gives_fingerprint_bytes_for_lists_and_arrays():
    values = ["HTTP://Example.com:80/", None, "http://a b/", "http://example.com/%7e", "x"]
    expected = [
        urinorm.fingerprint("HTTP://Example.com:80/"),
        None,
        None,
        urinorm.fingerprint("http://example.com/~"),
        urinorm.fingerprint("x"),
    ]
    from_list = urinorm.fingerprint_batch(values)
    assert from_list.type == pa.binary(16)
    assert from_list.to_pylist() == expected
    assert from_list.null_count == 2
    for array in (pa.array(values, pa.string()), pa.array(values, pa.large_string())):
        assert urinorm.fingerprint_batch(array).to_pylist() == expected
    chunked = pa.chunked_array([values[:2], values[2:]], pa.string())
    result = urinorm.fingerprint_batch(chunked)
    assert isinstance(result, pa.ChunkedArray) and result.type == pa.binary(16)
    assert result.to_pylist() == expected
    # Options apply as for normalize: at the syntax rung the port stays.
    assert urinorm.fingerprint_batch(values[:1], rung="syntax").to_pylist() == [
        urinorm.fingerprint(values[0], rung="syntax")
    ]
    assert urinorm.fingerprint_batch(values[:1], key="surt").to_pylist() == [
        urinorm.fingerprint(values[0], key="surt")
    ]
    with pytest.raises(TypeError, match="fingerprint_batch takes"):
        urinorm.fingerprint_batch(pa.array([1, 2]))


def test_one_string_where_many_values_are_expected_is_a_type_error(tmp_path):
    # A string is iterable: read as many values, it would be its letters.
    for call in (urinorm.normalize_batch, urinorm.fingerprint_batch):
        with pytest.raises(TypeError, match="not one string: wrap it in a list"):
            call("http://A/")
    with urinorm.SeenSet(tmp_path / "seen") as seen:
        for ask in (seen.add, seen.contains, seen.add_keys):
            with pytest.raises(TypeError, match="not one string"):
                ask("http://a/")
        assert len(seen) == 0


def reasons_of(values, **options):
    """What normalize says of each value: None where it has a key or is None."""
    why = []
    for value in values:
        try:
            if value is not None:
                urinorm.normalize(value, **options)
            why.append(None)
        except urinorm.InvalidUri as e:
            why.append(str(e))
    return why


def test_reasons_say_why_each_null_is_null():
    expected = reasons_of(VALUES)
    assert expected[1] is None and expected[2] is not None, "a null and an invalid value"
    for values in (VALUES, pa.array(VALUES), pa.array(VALUES, type=pa.string_view())):
        result, valid, why = urinorm.normalize_batch(values, reasons=True)
        check(result, valid)
        assert why.type == pa.large_string()
        assert why.to_pylist() == expected
    chunked = urinorm.normalize_batch(pa.chunked_array([VALUES[:3], VALUES[3:]]), reasons=True)
    assert [len(c) for c in chunked[2].chunks] == [3, 4]
    assert chunked[2].to_pylist() == expected
    dictionary = urinorm.normalize_batch(pa.array(VALUES * 3).dictionary_encode(), reasons=True)
    assert dictionary[2].to_pylist() == expected * 3
    assert urinorm.normalize_batch(pa.nulls(2), reasons=True)[2].to_pylist() == [None, None]
    prints, why = urinorm.fingerprint_batch(VALUES, reasons=True)
    assert why.to_pylist() == expected
    # Two results without reasons, as before.
    assert len(urinorm.normalize_batch(VALUES)) == 2


def test_reasons_are_the_same_on_any_number_of_threads():
    values = [f"http://h{i}/{'%zz' if i % 7 == 0 else ''}" for i in range(20_001)]
    one = urinorm.normalize_batch(values, reasons=True, threads=1)
    two = urinorm.normalize_batch(values, reasons=True, threads=2)
    assert all(a.equals(b) for a, b in zip(one, two, strict=True))
    assert one[2].null_count == 20_001 - len(range(0, 20_001, 7))


def test_reasons_name_a_base_at_fault():
    result, valid, why = urinorm.resolve_batch(
        ["http://a/", "http://a b/", "rel", None, "http://a/"],
        ["x y", "c", "c", "c", "d"],
        reasons=True,
    )
    assert result.to_pylist() == [None, None, None, None, "http://a/d"]
    assert why[0].as_py() == "space is not allowed in a URI at byte 1"
    assert why[1].as_py().startswith("the base: space is not allowed")
    assert why[2].as_py().startswith("the base: base URI has no scheme")
    assert why[3].as_py() is None
    assert why[4].as_py() is None


def test_threads_give_the_same_result_when_keys_and_reasons_outgrow_the_room_guessed():
    # Lenient reading percent-encodes each "ü" (2 bytes) as %C3%BC (6): the
    # keys are about 3 times their input, past what a threaded batch
    # reserves for them; every fifth row is refused, with a sentence longer
    # than the few bytes a row reserved for its reason.
    values = [f"http://h{i % 13}.example/{'ü' * (i % 97)}" if i % 5 else f"http://[{i}/" for i in range(30_011)]
    for source in (pa.array(values), pa.array(values, type=pa.large_string()), pa.array(values)[3:]):
        one = urinorm.normalize_batch(source, lenient=True, reasons=True, threads=1)
        assert one[2].null_count == len(source) - one[0].null_count
        assert sum(len(key) for key in one[0].to_pylist() if key) > 3 * 30_011 * 48
        for threads in (2, 3):
            many = urinorm.normalize_batch(source, lenient=True, reasons=True, threads=threads)
            assert all(a.equals(b) for a, b in zip(many, one, strict=True))
