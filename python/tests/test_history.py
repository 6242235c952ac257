"""A seen store's history as Parquet (`urinorm seen export`): a table pyarrow
and DuckDB read, whose footer and `_urinorm.json` record the key
configuration `urinorm.seen_config` gives."""

import json
import subprocess
from datetime import datetime, timezone

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

import urinorm
from conftest import SAMPLE


def run(cli, *args):
    done = subprocess.run([cli, *map(str, args)], capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done


def keys_of(cli, store) -> int:
    stats = json.loads(run(cli, "seen", "stats", "--json", store).stdout)
    return stats["keys"]


def test_an_export_is_a_table_pyarrow_and_duckdb_read(cli, tmp_path):
    store, history = tmp_path / "store", tmp_path / "history"
    run(cli, "seen", "add", "-q", "--rung", "scheme", "--now", "2026-11-01T00:00:00Z", store, SAMPLE)
    extra = tmp_path / "extra.txt"
    extra.write_text("https://example.com/day-five\nhttps://example.com/day-five-too\n")
    run(cli, "seen", "add", "-q", "--rung", "scheme", "--now", "2026-11-05T12:00:00Z", store, extra)
    run(cli, "seen", "export", store, "-o", history)
    keys = keys_of(cli, store)

    table = pq.read_table(history)
    assert table.schema.names == ["fingerprint", "admitted", "site", "site_name"]
    assert table.schema.field("fingerprint").type == pa.binary()
    assert table.schema.field("admitted").type == pa.timestamp("us", tz="UTC")
    assert table.schema.field("site").type == pa.int64()
    assert table.schema.field("site_name").type == pa.string()
    assert table.num_rows == keys
    # A store without budgets keeps no sites.
    assert table.column("site").null_count == keys
    fingerprints = set(table.column("fingerprint").to_pylist())
    assert urinorm.fingerprint("https://example.com/day-five", rung="scheme") in fingerprints
    assert all(len(f) == 16 for f in fingerprints)

    # The configuration, in each file's footer and beside them, is the one
    # a SeenSet of the same options records.
    wanted = urinorm.seen_config(rung="scheme")
    (part,) = history.glob("*.parquet")
    footer = pq.read_metadata(part).metadata[b"urinorm.config"]
    assert json.loads(footer) == wanted
    assert json.loads((history / "_urinorm.json").read_text())["config"] == wanted

    # "How many keys did we admit since November 3rd?", asked in SQL.
    since = datetime(2026, 11, 3, tzinfo=timezone.utc)
    (count,) = duckdb.execute(
        "SELECT count(*) FROM read_parquet(?) WHERE admitted >= ?",
        [str(history / "*.parquet"), since],
    ).fetchone()
    assert count == 2


def test_a_budgeted_stores_export_names_each_keys_site(cli, tmp_path):
    store, history = tmp_path / "store", tmp_path / "history"
    batch = tmp_path / "batch.txt"
    batch.write_text("".join(f"https://{host}.example/{i}\n" for host in ("a", "b") for i in range(5)))
    run(cli, "seen", "add", "-q", "--budget-per-host", "3", store, batch)
    run(cli, "seen", "export", store, "-o", history)
    # "How many keys of each host did we admit?", asked in SQL.
    rows = duckdb.execute(
        "SELECT site_name, count(*) FROM read_parquet(?) GROUP BY site_name ORDER BY site_name",
        [str(history / "*.parquet")],
    ).fetchall()
    assert rows == [("a.example", 3), ("b.example", 3)]
    assert json.loads((history / "_urinorm.json").read_text())["sites"] == "host"


def test_parse_duration_is_the_command_lines_grammar():
    assert urinorm.parse_duration("1h30m") == 5400
    assert urinorm.parse_duration("1day 12h") == 129600
    try:
        urinorm.parse_duration("soon")
    except ValueError as e:
        assert "'soon' is not a length of time" in str(e)
    else:
        raise AssertionError("'soon' parsed")


def test_a_seen_set_keeps_the_command_lines_budget(cli, tmp_path):
    store = tmp_path / "store"
    batch = tmp_path / "batch.txt"
    batch.write_text("".join(f"https://a.example/{i}\n" for i in range(2)))
    run(cli, "seen", "add", "-q", "--budget-per-host", "3", store, batch)
    with urinorm.SeenSet(store, budget_per_host=3) as seen:
        urls = [f"https://a.example/{i}" for i in range(2, 5)] + ["https://b.example/"]
        assert seen.add(urls) == [True, False, False, True]
        assert seen.capped == 2
    # The store's count goes on: the command line's next batch is capped.
    more = tmp_path / "more.txt"
    more.write_text("https://a.example/9\n")
    done = run(cli, "dedup", "--seen", store, "--budget-per-host", "3", more)
    assert done.stdout == ""
    with urinorm.SeenSet(store, budget_per_host=4) as seen:
        assert seen.add(["https://a.example/9", "https://a.example/10"]) == [True, False]
