"""Same bytes as the command line: on the shipped sample, for several option
sets, every function gives what `urinorm normalize` prints, and rejects
what it rejects with the same reason."""

import re
import subprocess

import pyarrow as pa
import pytest

import urinorm
from conftest import ROOT, SAMPLE, read_lines

# Command-line flags and the same options as keyword arguments.
OPTION_SETS = [
    ([], {}),
    (["--rung", "string"], {"rung": "string"}),
    (["--rung", "syntax"], {"rung": "syntax"}),
    (["--rung", "protocol"], {"rung": "protocol"}),
    (["--preset", "aggressive"], {"preset": "aggressive"}),
    (
        ["--preset", "aggressive", "--without", "strip-www", "--with", "decode-safe"],
        {"preset": "aggressive", "without": "strip-www", "with_": ["decode-safe"]},
    ),
    (
        ["--with", "trailing-slash=add", "--with", "lowercase-path", "--with", "drop-empty-params"],
        {"with_": ["trailing-slash=add", "lowercase-path", "drop-empty-params"]},
    ),
]
IDS = [
    "default",
    "string",
    "syntax",
    "protocol",
    "aggressive",
    "aggressive-www+decode",
    "add-slash",
]

# `file:line: reason at byte N`, and the hint the command line adds about
# its own --lenient flag, which the Python API does not have; or
# `file:line: rule NAME ...` for a line a site rule broke.
REJECTION = re.compile(r"^(.*?):(\d+): (.* at byte \d+|rule .*)( \(--lenient would [^)]*\))?$")


def run_cli(cli, flags, key, source=SAMPLE):
    """The command's output lines and its rejections as {line number: reason}."""
    done = subprocess.run(
        # Each rejection on standard error (not with --quiet), and every URI
        # reference taken, as Python's normalize takes it.
        [cli, "normalize", "--fetchable=never", "--key", key, *flags, source],
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stderr  # the sample has lines that are not URIs
    rejected = {}
    for line in done.stderr.splitlines():
        if line.startswith("urinorm:"):
            continue  # the summary
        match = REJECTION.match(line)
        assert match, line
        rejected[int(match[2])] = match[3]
    return done.stdout.splitlines(), rejected


def one_by_one(function, lines, options, rejected):
    """Each (number, line) through `function` alone: the accepted results;
    each rejection must be the one the command line gave for that line, and
    every one it gave must come up."""
    accepted = []
    for number, line in lines:
        try:
            accepted.append(function(line, **options))
        except urinorm.InvalidUri as e:
            assert rejected.pop(number) == str(e), (number, line)
    assert rejected == {}
    return accepted


@pytest.mark.parametrize("key", ["canonical", "surt"])
@pytest.mark.parametrize(("flags", "options"), OPTION_SETS, ids=IDS)
def test_same_output_as_the_command_line(cli, sample, flags, options, key):
    printed, rejected = run_cli(cli, flags, key)
    assert len(rejected) == 17
    assert len(printed) + len(rejected) == len(sample)
    function = urinorm.surt if key == "surt" else urinorm.normalize

    # One call per line.
    assert one_by_one(function, sample, options, rejected) == printed

    # In one batch, from a list and from an Arrow array.
    lines = [line for _, line in sample]
    for values in (lines, pa.array(lines, type=pa.string())):
        result, valid = urinorm.normalize_batch(values, key=key, **options)
        assert result.drop_null().to_pylist() == printed
        assert valid.false_count == 17


def test_tracking_list_from_a_file_and_from_names(cli, sample, tmp_path):
    tracking = tmp_path / "tracking.txt"
    tracking.write_text("# site-specific\nref\nsrc_*\n\nmkt_tok\n")
    printed, _ = run_cli(cli, ["--tracking-params", str(tracking)], "canonical")
    names = ["# site-specific", "ref", "src_*", "", "mkt_tok"]
    result, _ = urinorm.normalize_batch([line for _, line in sample], tracking_params=names)
    assert result.drop_null().to_pylist() == printed


def test_the_command_line_hint_is_its_only_addition(cli, sample):
    """Where the command line prints more than the Python message, it is only
    the hint about its --lenient flag."""
    done = subprocess.run(
        [cli, "normalize", SAMPLE], check=False, capture_output=True, text=True
    )
    hinted = [m for m in map(REJECTION.match, done.stderr.splitlines()) if m and m[4]]
    assert hinted, "the sample has lines --lenient would repair"
    lines = dict(sample)
    for match in hinted:
        with pytest.raises(urinorm.InvalidUri) as caught:
            urinorm.normalize(lines[int(match[2])])
        assert f"{match[1]}:{match[2]}: {caught.value}{match[4]}" == match[0]


# Lines each rule of testdata/rules/ touches, added to the sample.
RULED = [
    "http://www.amazon.com/dp/1?ref=x&pf_rd_p=2&q=1",
    "http://shop.example/item?id=7&color=red",
    "http://sub.shop.example/item?id=7&color=red",
    "http://news.example/amp/story/1",
    "http://any.example/?spm=1&a=2",
    "http://wiki.example/Main_Page",
    "http://a.store.example/ref=abc/p?tag=1&k=2&ref_=3&pd_rd_w=4&utm_x=5",
    "http://store.example/cart?ref=1",
    "http://search.example/url?q=http%3A%2F%2Fx&sa=1",
    "http://tracker.example/?id=1",
    "http://spa.example/#session=1&x=2",
    "http://x.exempt.example/?spm=2&a=3",
    "http://x.example/x1",
    "http://x.example/y?spm=1",
]
RULES_DIR = ROOT / "testdata" / "rules"


@pytest.mark.parametrize("key", ["canonical", "surt"])
@pytest.mark.parametrize(
    "options",
    [
        {"rules": [RULES_DIR / "site.rules", "BREAK"]},
        {"rules_clearurls": RULES_DIR / "clearurls.json"},
        {
            "rules": ["BREAK", RULES_DIR / "site.rules"],
            "rules_clearurls": [RULES_DIR / "clearurls.json"],
            "preset": "aggressive",
            "without": "drop-fragment",
        },
    ],
    ids=["rules", "clearurls", "both-aggressive"],
)
def test_site_rules_give_what_the_command_line_prints(cli, tmp_path, key, options):
    """On the sample and lines each rule touches, with rules that break one
    line (rejected naming the rule), as `--rules` and `--rules-clearurls`."""
    breaking = tmp_path / "break.rules"
    breaking.write_text("x.example rewrite-path ^/x(.*)$ /%zz$1\n")
    options = dict(options)
    for kind in ("rules", "rules_clearurls"):
        given = options.get(kind)
        if isinstance(given, list):
            options[kind] = [breaking if p == "BREAK" else p for p in given]
    source = tmp_path / "urls.txt"
    source.write_bytes(SAMPLE.read_bytes() + "".join(u + "\n" for u in RULED).encode())
    flags = []
    for name, value in options.items():
        values = value if isinstance(value, list) else [value]
        flags += [arg for v in values for arg in ("--" + name.replace("_", "-"), str(v))]
    printed, rejected = run_cli(cli, flags, key, source)
    assert any(reason.startswith("rule ") for reason in rejected.values()) == ("rules" in options)

    function = urinorm.surt if key == "surt" else urinorm.normalize
    lines = read_lines(source)
    accepted = one_by_one(function, lines, options, rejected)
    assert accepted == printed
    # The rules did something to the lines made for them.
    assert accepted[-len(RULED) :] != [function(line) for line in RULED]

    result, valid = urinorm.normalize_batch([line for _, line in lines], key=key, **options)
    assert result.drop_null().to_pylist() == printed
    assert valid.true_count == len(printed)


def run_cli_lines(cli, flags, source):
    """The command's output lines and how many lines it rejected."""
    done = subprocess.run(
        [cli, "normalize", "--fetchable=never", *flags, source],
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode in (0, 1), done.stderr
    rejected = sum(1 for line in done.stderr.splitlines() if not line.startswith("urinorm:"))
    return done.stdout.splitlines(), rejected


def test_lenient_is_the_command_lines(cli, sample):
    printed, rejected = run_cli_lines(cli, ["--lenient"], SAMPLE)
    assert rejected < 17, "the repairs save some of the sample's 17"
    lines = [line for _, line in sample]
    for values in (lines, pa.array(lines)):
        result, valid = urinorm.normalize_batch(values, lenient=True)
        assert result.drop_null().to_pylist() == printed
        assert valid.false_count == rejected
    accepted = []
    for line in lines:
        try:
            accepted.append(urinorm.normalize(line, lenient=True))
        except urinorm.InvalidUri:
            pass
    assert accepted == printed


def test_resolve_batch_is_base_field(cli, sample, tmp_path):
    """A link dataset made of the sample: each line's reference (absolute,
    its path alone, or a dot-relative path) against the line before it."""
    lines = [line for _, line in sample if "\t" not in line]
    bases, references = [], []
    for i, (base, line) in enumerate(zip(lines, lines[1:])):
        path = "/" + line.split("/", 3)[3] if line.count("/") >= 3 else line
        references.append([line, path, "../" + path.rsplit("/", 1)[-1], " " + path][i % 4])
        bases.append(base)
    links = tmp_path / "links.tsv"
    links.write_text("".join(f"{b}\t{r}\n" for b, r in zip(bases, references)))
    for lenient in (False, True):
        flags = ["--field", "2", "--base-field", "1"] + (["--lenient"] if lenient else [])
        printed, rejected = run_cli_lines(cli, flags, str(links))
        assert len(printed) > len(lines) // 2
        # The command line writes the line back, its column replaced.
        printed = [line.split("\t")[1] for line in printed]
        for kind in (list, pa.array):
            result, valid = urinorm.resolve_batch(
                kind(bases), kind(references), lenient=lenient
            )
            assert result.drop_null().to_pylist() == printed
            assert valid.false_count == rejected
