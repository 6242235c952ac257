"""SeenSet: the seen store from Python, the same store as `urinorm dedup --seen`."""

import subprocess

import pyarrow as pa
import pytest

import urinorm
from conftest import ROOT, SAMPLE, read_lines

LINES = [line for _, line in read_lines(SAMPLE)]


def dedup_seen(cli, store, lines, *flags):
    """`urinorm dedup --seen store` on `lines`: the lines it writes."""
    done = subprocess.run(
        [cli, "dedup", "--quiet", "--seen", str(store), *flags],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout.splitlines()


def test_add_and_contains_answer_per_value(tmp_path):
    with urinorm.SeenSet(tmp_path / "s") as seen:
        assert seen.add(["http://a/", "HTTP://A:80/", "http://b/", "not a uri", None]) == [
            True,
            False,
            True,
            None,
            None,
        ]
        assert seen.add(["http://b/", "http://c/"]) == [False, True]
        assert seen.contains(["http://A/", "http://d/", None]) == [True, False, None]
        assert "http://c/" in seen and "http://d/" not in seen
        assert len(seen) == 3
    # Committed at the end of the block: a new SeenSet holds them.
    with urinorm.SeenSet(tmp_path / "s") as seen:
        assert len(seen) == 3
        assert seen.contains(["http://a/", "http://b/", "http://c/"]) == [True] * 3


def test_only_fetchable_uris_are_admitted(tmp_path):
    """A relative reference, or an http(s) URI without a host, is no page
    a crawler can fetch: not a key of the frontier."""
    with urinorm.SeenSet(tmp_path / "s") as seen:
        assert seen.add(["foo", "../bar", "https://", "http:foo", "http://ok/"]) == [
            None,
            None,
            None,
            None,
            True,
        ]
        assert len(seen) == 1


def test_arrow_arrays_in_boolean_arrays_out(tmp_path):
    with urinorm.SeenSet(tmp_path / "s") as seen:
        got = seen.add(pa.array(["http://a/", None, "HTTP://A/", "not a uri"]))
        assert got.type == pa.bool_()
        assert got.to_pylist() == [True, None, False, None]
        large = seen.contains(pa.array(["http://a/", "http://z/"], type=pa.large_string()))
        assert large.to_pylist() == [True, False]
        chunked = seen.add(pa.chunked_array([["http://b/"], ["http://b/", "http://c/"]]))
        assert isinstance(chunked, pa.ChunkedArray)
        assert chunked.to_pylist() == [True, False, True]
        with pytest.raises(TypeError, match="string or large_string"):
            seen.add(pa.array([1, 2]))


def test_a_store_made_by_the_command_line_opens_in_python_and_back(cli, tmp_path):
    store = tmp_path / "frontier"
    first, second = LINES[:3000], LINES[2000:]
    admitted = dedup_seen(cli, store, first, "--preset", "safe")
    with urinorm.SeenSet(store, preset="safe") as seen:
        assert len(seen) == len(admitted)
        assert seen.contains(admitted) == [True] * len(admitted)
        # What Python adds of the second batch is exactly what the command
        # line would write of it.
        new = seen.add(second)
    check = tmp_path / "check"
    dedup_seen(cli, check, first, "--preset", "safe")
    by_cli = dedup_seen(cli, check, second, "--preset", "safe", "--emit", "first")
    by_python = [line for line, is_new in zip(second, new, strict=True) if is_new]
    assert by_python == by_cli
    # And back: the command line holds what Python committed.
    assert dedup_seen(cli, store, second, "--preset", "safe") == []


def test_a_store_of_other_options_is_refused(cli, tmp_path):
    store = tmp_path / "s"
    dedup_seen(cli, store, LINES[:100])
    with pytest.raises(urinorm.SeenStoreError, match="transforms: the store's"):
        urinorm.SeenSet(store, preset="aggressive")
    with pytest.raises(urinorm.SeenStoreError, match="key: the store's canonical, this run's surt"):
        urinorm.SeenSet(store, key="surt")
    urinorm.SeenSet(store).close()


def test_the_frontier_default_is_the_command_lines(cli, tmp_path):
    """With no option, a SeenSet keys as `dedup --seen` and `urinorm serve`
    do with none: fragments and tracking parameters merged, parameters
    sorted, what no crawler fetches refused; the store opens in either."""
    store = tmp_path / "s"
    with urinorm.SeenSet(store) as seen:
        added = seen.add(
            ["http://a.example/x#one", "http://a.example/x?utm_source=z", "mailto:a@b.c", "http://a.example/y?b=2&a=1"]
        )
        assert added == [True, False, None, True]
    again = dedup_seen(cli, store, ["http://a.example/x", "http://a.example/y?a=1&b=2", "http://new.example/"])
    assert again == ["http://new.example/"]


def test_one_writer_at_a_time_and_an_error_commits_nothing(tmp_path):
    store = tmp_path / "s"
    held = urinorm.SeenSet(store)
    # The lock is held from opening to close(), across commits; the message
    # says the holder is this very process.
    held.commit()
    with pytest.raises(
        urinorm.SeenStoreError, match=r"being written by this process .*still open"
    ):
        urinorm.SeenSet(store)
    held.add(["http://a/"])
    held.close()
    with pytest.raises(RuntimeError), urinorm.SeenSet(store) as seen:
        seen.add(["http://b/"])
        raise RuntimeError("the crawler failed before fetching")
    with urinorm.SeenSet(store) as seen:
        assert seen.contains(["http://a/", "http://b/"]) == [True, False]


def test_keys_made_by_the_caller(tmp_path):
    with urinorm.SeenSet(tmp_path / "s") as seen:
        assert seen.add_keys([b"POST http://a/\n1", "POST http://a/\n2", b"POST http://a/\n1"]) == [
            True,
            True,
            False,
        ]
        assert len(seen) == 2


def test_a_store_records_the_rules_by_their_contents(cli, tmp_path):
    """A store made by `dedup --seen --rules` opens in Python with the same
    rules (from another path too), and is refused without them or with others."""
    rules = tmp_path / "site.rules"
    rules.write_text("example.com drop-params ref\n")
    lines = ["http://example.com/a?ref=1", "http://example.com/a?ref=2", "http://b/?ref=3"]
    store = tmp_path / "s"
    admitted = dedup_seen(cli, store, lines, "--rules", str(rules))
    assert admitted == ["http://example.com/a", "http://b/?ref=3"]
    copy = tmp_path / "elsewhere.rules"
    copy.write_bytes(rules.read_bytes())
    for path in (rules, copy):
        with urinorm.SeenSet(store, rules=path) as seen:
            assert "rules=" in seen._set.config()
            assert seen.contains(["http://example.com/a?ref=9", "http://b/?ref=4"]) == [True, False]
    with pytest.raises(urinorm.SeenStoreError, match="rules"):
        urinorm.SeenSet(store, preset="safe")
    other = tmp_path / "other.rules"
    other.write_text("example.com drop-params src\n")
    with pytest.raises(urinorm.SeenStoreError, match="rules"):
        urinorm.SeenSet(store, rules=other)
    with pytest.raises(urinorm.SeenStoreError, match="rules"):
        urinorm.SeenSet(store, rules_clearurls=ROOT / "testdata" / "rules" / "clearurls.json")
    # What Python admits, the command line holds.
    with urinorm.SeenSet(store, rules=[copy]) as seen:
        assert seen.add(["http://c/?ref=1", "http://example.com/a"]) == [True, False]
    assert dedup_seen(cli, store, ["http://c/", "http://c/?ref=1"], "--rules", str(rules)) == [
        "http://c/"
    ]


def test_rules_errors_open_no_store(tmp_path):
    bad = tmp_path / "bad.rules"
    bad.write_text("a.com frobnicate\n")
    with pytest.raises(urinorm.RulesError, match="bad.rules:1: unknown action 'frobnicate'"):
        urinorm.SeenSet(tmp_path / "s", rules=bad)
    with pytest.raises(FileNotFoundError):
        urinorm.SeenSet(tmp_path / "s", rules=tmp_path / "missing.rules")
    assert not (tmp_path / "s").exists()


def test_keys_older_than_max_age_are_new_again(cli, tmp_path):
    from datetime import datetime, timedelta, timezone

    day0 = datetime(2026, 11, 1)
    with urinorm.SeenSet(tmp_path / "s", now=day0) as seen:
        assert seen.add(["http://a/", "http://b/"]) == [True, True]
    day5 = day0 + timedelta(days=5)
    with urinorm.SeenSet(tmp_path / "s", now=day5, max_age="7d") as seen:
        assert seen.add(["http://a/", "http://c/"]) == [False, True]
    # Day 10: a and b (day 0) expired, c (day 5) held; a key admitted
    # again is one key still.
    day10 = day0 + timedelta(days=10)
    with urinorm.SeenSet(tmp_path / "s", now=day10, max_age=timedelta(days=7)) as seen:
        assert seen.contains(["http://a/", "http://c/"]) == [False, True]
        assert seen.add(["http://a/", "http://A/", "http://c/"]) == [True, False, False]
        assert len(seen) == 3
    # The command line reads the same times: b, not re-admitted, expired.
    day11 = (day0 + timedelta(days=11)).strftime("%Y-%m-%dT%H:%M:%SZ")
    kept = dedup_seen(
        cli, tmp_path / "s", ["http://a/", "http://b/", "http://c/"],
        "--seen-readonly", "--seen-max-age", "7d", "--now", day11,
    )
    assert kept == ["http://b/"]
    # In seconds too; and a length that is not one is refused.
    day40 = (day0 + timedelta(days=40)).replace(tzinfo=timezone.utc).timestamp()
    with urinorm.SeenSet(tmp_path / "s", now=day40, max_age=86400.0) as seen:
        assert seen.contains(["http://a/"]) == [False]
    with pytest.raises(ValueError, match="not a length of time"):
        urinorm.SeenSet(tmp_path / "s", max_age="a week")
    # One grammar with the command line's: units together, as 1h30m. The
    # key of a was admitted again on day 10.
    later = day10 + timedelta(hours=1)
    for age in ("1h30m", timedelta(hours=1, minutes=30), 5400):
        with urinorm.SeenSet(tmp_path / "s", now=later, max_age=age) as seen:
            assert seen.contains(["http://a/"]) == [True], age
    with urinorm.SeenSet(tmp_path / "s", now=later, max_age="30m") as seen:
        assert seen.contains(["http://a/"]) == [False]
