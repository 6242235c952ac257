"""The Python API, call by call: rungs, presets, transforms, keys, errors."""

import os
import re
import subprocess

import pyarrow as pa
import pytest

import urinorm
from conftest import ROOT


@pytest.mark.parametrize(
    ("rung", "expected"),
    [
        ("string", "HTTP://www.Example.com:80/a/./b/../%7euser"),
        ("syntax", "http://www.example.com:80/a/~user"),
        ("scheme", "http://www.example.com/a/~user"),
        (None, "http://www.example.com/a/~user"),
        ("protocol", "http://www.example.com/a/~user"),
    ],
)
def test_each_rung(rung, expected):
    assert urinorm.normalize("HTTP://www.Example.com:80/a/./b/../%7euser", rung=rung) == expected


def test_scheme_rung_maps_international_hosts_to_ascii():
    assert urinorm.normalize("http://B%C3%BCcher.de") == "http://xn--bcher-kva.de/"


def test_presets():
    uri = "http://www.example.com/a/index.html?utm_source=x&b=2&a=1#top"
    assert urinorm.normalize(uri, preset="safe") == "http://www.example.com/a/index.html?b=2&a=1"
    assert urinorm.normalize(uri, preset="aggressive") == "https://example.com/a?a=1&b=2"


def test_protocol_rung_alone_is_the_safe_preset():
    uri = "http://a/?gclid=1&x=2#f"
    assert urinorm.normalize(uri, rung="protocol") == urinorm.normalize(uri, preset="safe")
    assert urinorm.normalize(uri, rung="protocol") == "http://a/?x=2"


def test_with_and_without_take_one_name_or_several():
    uri = "http://www.example.com/a/#top"
    # with_ alone starts from the safe preset, as --with does.
    assert urinorm.normalize(uri, with_="strip-www") == "http://example.com/a/"
    assert (
        urinorm.normalize(uri, with_=["strip-www", "trailing-slash=remove"])
        == "http://example.com/a"
    )
    assert (
        urinorm.normalize(uri, preset="aggressive", without=("strip-www", "https-upgrade"))
        == "http://www.example.com/a"
    )
    assert urinorm.normalize(uri, without="drop-fragment") == "http://www.example.com/a/#top"


def test_trailing_slash_choices_exclude_each_other():
    uri = "http://a/b/"
    assert urinorm.normalize(uri, preset="aggressive", with_="trailing-slash=add") == "https://a/b/"
    assert urinorm.normalize("http://a/b", with_="trailing-slash=add") == "http://a/b/"


def test_tracking_params_replace_the_built_in_list():
    uri = "http://a/?ref=x&utm_source=y&src_id=3&k=1"
    assert urinorm.normalize(uri, preset="safe") == "http://a/?ref=x&src_id=3&k=1"
    assert urinorm.normalize(uri, tracking_params=["ref", "src_*"]) == "http://a/?utm_source=y&k=1"
    # A tracking list alone asks for the protocol rung, as --tracking-params does.
    assert urinorm.normalize(uri, tracking_params="ref") == "http://a/?utm_source=y&src_id=3&k=1"


def test_surt_is_made_from_the_canonical_form():
    assert urinorm.surt("http://www.example.com:8080/a?b#c") == "com,example,www:8080)/a?b#c"
    assert urinorm.surt("HTTP://WWW.Example.com:80") == "com,example,www)/"
    assert (
        urinorm.surt("http://www.example.com/?utm_source=x", preset="aggressive") == "com,example)/"
    )
    assert urinorm.surt("dns:example.com") == "dns:example.com"


def test_resolve_follows_section_5_4():
    base = "http://a/b/c/d;p?q"
    assert urinorm.resolve(base, "g;x?y#s") == "http://a/b/c/g;x?y#s"
    assert urinorm.resolve(base, "../../../g") == "http://a/g"
    assert urinorm.resolve(base, "") == "http://a/b/c/d;p?q"
    # Strict: a reference with a scheme is absolute.
    assert urinorm.resolve(base, "http:g") == "http:g"


def test_invalid_uri_has_the_reason_and_offset():
    with pytest.raises(urinorm.InvalidUri) as caught:
        urinorm.normalize("http://a/b%zz")
    error = caught.value
    assert str(error) == "invalid percent-encoding at byte 10"
    assert error.offset == 10
    assert error.reason == "invalid percent-encoding"
    assert isinstance(error, ValueError)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: urinorm.normalize("http://exa mple.com/"),
            "space is not allowed in a URI at byte 10",
        ),
        (
            lambda: urinorm.normalize("http://a:99999/"),
            "port is out of range (0 to 65535) at byte 9",
        ),
        (lambda: urinorm.surt("http://[::1/"), "IP literal without its closing ']' at byte 7"),
        (
            lambda: urinorm.normalize("http://a/é"),
            "non-ASCII byte is not allowed in a URI at byte 9",
        ),
        (lambda: urinorm.resolve("a/b", "c"), "the base: base URI has no scheme at byte 0"),
        (
            lambda: urinorm.resolve("http://a/", "b c"),
            "the reference: space is not allowed in a URI at byte 1",
        ),
    ],
)
def test_invalid_uri_messages(call, message):
    with pytest.raises(urinorm.InvalidUri, match="^" + re.escape(message) + "$"):
        call()


def test_resolve_names_the_argument_at_fault():
    for base, reference, argument in [
        ("a/b", "c", "base"),
        ("http://a b/", "c", "base"),
        ("http://a/", "%zz", "reference"),
    ]:
        with pytest.raises(urinorm.InvalidUri) as raised:
            urinorm.resolve(base, reference)
        assert raised.value.argument == argument
    with pytest.raises(urinorm.InvalidUri) as raised:
        urinorm.normalize("%zz")
    assert raised.value.argument is None


def test_the_syntax_rung_keeps_a_large_port():
    # §3.2.3 sets no bound; only the scheme rung knows http's ports are TCP ports.
    assert urinorm.normalize("http://a:99999/", rung="syntax") == "http://a:99999/"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rung": "schema"}, "unknown rung 'schema' (choose string, syntax, scheme or protocol)"),
        ({"preset": "wild"}, "unknown preset 'wild' (choose safe, aggressive or ia)"),
        ({"with_": "strip_www"}, "unknown transform 'strip_www' (see `urinorm transforms`)"),
        ({"without": ["drop-fragment", "x"]}, "unknown transform 'x' (see `urinorm transforms`)"),
        (
            {"rung": "scheme", "preset": "safe"},
            "a preset, added or removed transforms, a tracking list and site rules need the protocol rung, not the scheme rung",
        ),
        (
            {"rung": "string", "tracking_params": ["ref"]},
            "a preset, added or removed transforms, a tracking list and site rules need the protocol rung, not the string rung",
        ),
    ],
)
def test_bad_options_raise_value_error(kwargs, message):
    for function in (urinorm.normalize, urinorm.surt):
        with pytest.raises(ValueError) as caught:
            function("http://a/", **kwargs)
        assert str(caught.value) == message
        assert not isinstance(caught.value, urinorm.InvalidUri)


def test_text_that_is_not_utf8_is_a_caller_error():
    with pytest.raises(UnicodeEncodeError):
        urinorm.normalize("http://a/\udcff")


def test_constants_describe_the_ladder():
    assert urinorm.RUNGS == ("string", "syntax", "scheme", "protocol")
    assert len(urinorm.TRANSFORMS) == 24
    assert set(urinorm.PRESETS) == {"safe", "aggressive", "ia"}
    assert set(urinorm.PRESETS["safe"]) < set(urinorm.PRESETS["aggressive"])
    assert set(urinorm.PRESETS["aggressive"]) <= set(urinorm.TRANSFORMS)
    assert set(urinorm.PRESETS["ia"]) <= set(urinorm.TRANSFORMS)


def test_surt_with_the_ia_preset_gives_cdx_keys():
    # The Internet Archive's own vectors (urlcanon's defaultIASurt).
    assert urinorm.surt("http://www.archive.org/", preset="ia") == "org,archive)/"
    assert urinorm.surt("http://archive.org/goo/?a=2&b&a=1", preset="ia") == "org,archive)/goo?a=1&a=2&b"
    assert urinorm.surt("http://www.archive.org/", preset="ia", without=["cdx-spelling", "strip-www-digits"]) == "org,archive,www)/"
    assert urinorm.__version__ == "0.1.0"


def test_fingerprint_is_xxh3_128_of_the_key_big_endian():
    # The same known answer as the Rust tests (src/fingerprint.rs), from
    # xxHash's own implementation: the bytes are the key's, not the input's.
    known = bytes.fromhex("42663426682770e605cd77c9b152d153")
    assert urinorm.fingerprint("http://example.com/") == known
    assert urinorm.fingerprint("HTTP://Example.COM:80") == known
    assert urinorm.fingerprint("HTTP://Example.COM:80", rung="syntax") != known
    surt_key = urinorm.surt("http://example.com/")
    assert urinorm.fingerprint("http://example.com/", key="surt") != known
    assert len(urinorm.fingerprint(surt_key, rung="string")) == 16
    with pytest.raises(urinorm.InvalidUri):
        urinorm.fingerprint("http://a b/")
    with pytest.raises(ValueError, match="unknown key"):
        urinorm.fingerprint("http://a/", key="bogus")


def test_host_and_domain_keys():
    values = ["HTTP://WWW.BBC.CO.UK:80/a", "http://foo.github.io/", "http://[::1]/", "mailto:a@b.c"]
    hosts, _ = urinorm.normalize_batch(values, key="host")
    domains, valid = urinorm.normalize_batch(values, key="domain")
    assert hosts.to_pylist() == ["www.bbc.co.uk", "foo.github.io", "[::1]", None]
    assert domains.to_pylist() == ["bbc.co.uk", "foo.github.io", "[::1]", None]
    assert valid.to_pylist() == [True, True, True, False]
    assert urinorm.fingerprint("http://www.bbc.co.uk/x", key="domain") == urinorm.fingerprint(
        "http://bbc.co.uk/y", key="domain"
    )


# Site rules: `rules=` and `rules_clearurls=`, the command line's `--rules`
# and `--rules-clearurls`.
RULES = ROOT / "testdata" / "rules" / "site.rules"
CLEARURLS = ROOT / "testdata" / "rules" / "clearurls.json"


@pytest.fixture
def ref_rules(tmp_path):
    """A rules file that drops `ref` for example.com and its subdomains."""
    path = tmp_path / "ref.rules"
    path.write_text("# one host's junk\nexample.com  drop-params  ref\n")
    return path


def test_a_rules_file_drops_a_parameter_for_one_host(ref_rules):
    assert urinorm.normalize("http://example.com/a?ref=x&id=1", rules=ref_rules) == (
        "http://example.com/a?id=1"
    )
    assert urinorm.normalize("http://www.example.com/?ref=x", rules=ref_rules) == (
        "http://www.example.com/"
    )
    # Other hosts keep it: on label boundaries only.
    for uri in ("http://example.org/a?ref=x", "http://badexample.com/a?ref=x"):
        assert urinorm.normalize(uri, rules=ref_rules) == uri
    # The path as a str, a Path, or a list of either.
    for given in (str(ref_rules), [ref_rules], (str(ref_rules),)):
        assert urinorm.normalize("http://example.com/?ref=1", rules=given) == "http://example.com/"


def test_the_site_rules_of_the_readme():
    cases = {
        "http://www.amazon.com/dp/1?ref=x&pf_rd_p=2&q=1": "http://www.amazon.com/dp/1?q=1",
        "http://shop.example/item?id=7&color=red": "http://shop.example/item?id=7",
        "http://sub.shop.example/item?id=7&color=red": "http://sub.shop.example/item?id=7&color=red",
        "http://news.example/amp/story/1": "http://news.example/story/1",
        "http://any.example/?spm=1&a=2": "http://any.example/?a=2",
        "http://wiki.example/Main_Page": "http://wiki.example/main_page",
    }
    for uri, expected in cases.items():
        assert urinorm.normalize(uri, rules=RULES) == expected, uri


def test_a_clearurls_file():
    cases = {
        # rawRules, rules and referralMarketing of the store provider; the
        # global provider's utm_*.
        "http://a.store.example/ref=abc/p?tag=1&k=2&ref_=3&pd_rd_w=4&utm_x=5": (
            "http://a.store.example/p?k=2"
        ),
        # The store's exception.
        "http://store.example/cart?ref=1": "http://store.example/cart?ref=1",
        # The fragment is dropped by the safe preset before the rules see it.
        "http://spa.example/#/page?session=1&x=2": "http://spa.example/",
        # A complete provider and a redirection are counted, not applied.
        "http://tracker.example/?id=1": "http://tracker.example/?id=1",
    }
    for uri, expected in cases.items():
        assert urinorm.normalize(uri, rules_clearurls=CLEARURLS) == expected, uri
        assert urinorm.normalize(uri, rules_clearurls=[str(CLEARURLS)]) == expected, uri
    # A provider for the fragment's parameters, with the fragment kept.
    assert (
        urinorm.normalize(
            "http://spa.example/#session=1&x=2", without="drop-fragment", rules_clearurls=CLEARURLS
        )
        == "http://spa.example/#x=2"
    )


def test_both_kinds_together():
    # globalRules has an exception for exempt.example; the line rule `* drop-params spm` not.
    uri = "http://x.exempt.example/?spm=2&a=3"
    assert urinorm.normalize(uri, rules_clearurls=CLEARURLS) == uri
    both = urinorm.normalize(uri, rules=RULES, rules_clearurls=CLEARURLS)
    assert both == "http://x.exempt.example/?a=3"
    normalizer = urinorm._options.normalizer(None, None, (), (), None, RULES, CLEARURLS)
    assert normalizer.rules.startswith("5 rules and 5 ClearURLs providers from 2 files")


def test_every_function_takes_rules(ref_rules):
    uri = "http://www.example.com/a?ref=x&id=1"
    canonical = "http://www.example.com/a?id=1"
    assert urinorm.normalize(uri, rules=ref_rules) == canonical
    assert urinorm.surt(uri, rules=ref_rules) == urinorm.surt(canonical)
    assert urinorm.fingerprint(uri, rules=ref_rules) == urinorm.fingerprint(canonical)
    assert urinorm.fingerprint(uri, key="surt", rules=ref_rules) == urinorm.fingerprint(
        canonical, key="surt"
    )
    result, _ = urinorm.normalize_batch([uri, None], rules=ref_rules)
    assert result.to_pylist() == [canonical, None]
    prints = urinorm.fingerprint_batch([uri], rules=ref_rules)
    assert prints.to_pylist() == [urinorm.fingerprint(canonical)]
    # Keyword-only: a path in the place of key is no rules file.
    with pytest.raises(TypeError):
        urinorm.normalize(uri, None, None, (), (), None, ref_rules)


def test_rules_ask_for_the_protocol_rung(ref_rules, tmp_path):
    uri = "http://a/?gclid=1&x=2#f"
    # The safe preset with them, as with a preset or a tracking list.
    assert urinorm.normalize(uri, rules=ref_rules) == "http://a/?x=2"
    assert urinorm.normalize(uri, rung="protocol", rules=ref_rules) == "http://a/?x=2"
    for rung in ("string", "syntax", "scheme"):
        message = f"a preset, added or removed transforms, a tracking list and site rules need the protocol rung, not the {rung} rung"
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
            urinorm.normalize(uri, rung=rung, rules=ref_rules)
        # Told before a file that cannot be read, as the command line does.
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
            urinorm.normalize(uri, rung=rung, rules_clearurls=tmp_path / "missing.json")
    # No path is no rules.
    assert urinorm.normalize(uri, rules=[]) == urinorm.normalize(uri)
    assert urinorm.normalize(uri, rung="scheme", rules=[], rules_clearurls=()) == (
        urinorm.normalize(uri, rung="scheme")
    )


def test_a_file_that_cannot_be_read_is_an_os_error(tmp_path):
    missing = tmp_path / "missing.rules"
    with pytest.raises(FileNotFoundError) as caught:
        urinorm.normalize("http://a/", rules=missing)
    assert caught.value.filename == str(missing)
    assert str(missing) in str(caught.value)
    with pytest.raises(FileNotFoundError, match=re.escape(str(missing))):
        urinorm.normalize_batch(["http://a/"], rules_clearurls=[RULES, missing])
    with pytest.raises(IsADirectoryError, match=re.escape(str(tmp_path))):
        urinorm.normalize("http://a/", rules=tmp_path)
    # A mistake in another option is told first.
    with pytest.raises(ValueError, match="unknown preset 'wild'"):
        urinorm.normalize("http://a/", preset="wild", rules=missing)


@pytest.mark.parametrize(
    ("text", "kind", "message"),
    [
        (
            "# x\na.com strip-params ref\n",
            "rules",
            (
                ":2: unknown action 'strip-params'"
                " (choose drop-params, keep-params, rewrite-path or lowercase-path)"
            ),
        ),
        (
            "a.com rewrite-path ^/(a $1\n",
            "rules",
            ":1: bad regular expression '^/(a': unclosed group",
        ),
        ("a.com drop-params\n", "rules", ":1: drop-params needs at least one parameter name"),
        (
            '{"providers": [1, 2]}',
            "rules_clearurls",
            (
                ":1: not a ClearURLs rules file: invalid type: sequence,"
                " expected an object of providers at line 1 column 14"
            ),
        ),
        ("{}", "rules_clearurls", ': not a ClearURLs rules file: it has no "providers"'),
    ],
)
def test_a_rules_file_that_cannot_be_used_is_a_rules_error(tmp_path, text, kind, message):
    path = tmp_path / "bad"
    path.write_text(text)
    with pytest.raises(urinorm.RulesError) as caught:
        urinorm.normalize("http://a.com/", **{kind: path})
    error = caught.value
    assert isinstance(error, ValueError)
    assert str(error) == f"{path}{message}"
    assert error.file == str(path)
    place = f"{path}:{error.line}" if error.line is not None else str(path)
    assert str(error) == f"{place}: {error.problem}"


def test_a_rules_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "latin1.rules"
    path.write_bytes(b"a.com drop-params ref\nb.com drop-params caf\xe9\n")
    with pytest.raises(urinorm.RulesError) as caught:
        urinorm.normalize("http://a.com/", rules=path)
    assert str(caught.value) == f"{path}:2: not UTF-8 text (byte 0xe9 at offset 43)"
    assert (caught.value.file, caught.value.line) == (str(path), 2)


def test_an_edited_rules_file_is_read_again(tmp_path):
    path = tmp_path / "site.rules"
    path.write_text("example.com drop-params ref\n")
    uri = "http://example.com/?ref=1&src=2"
    first = urinorm._options.normalizer(None, None, (), (), None, path)
    assert first.normalize(uri) == "http://example.com/?src=2"
    # Unchanged: the cached normalizer, looked up by the file's stat.
    assert urinorm._options.normalizer(None, None, (), (), None, path) is first
    path.write_text("example.com drop-params src\n")
    # The same size: only the modification time tells (set apart here, as a
    # coarse clock might not).
    status = path.stat()
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000))
    assert urinorm.normalize(uri, rules=path) == "http://example.com/?ref=1"
    path.write_text("example.com drop-params ref src\n")
    assert urinorm.normalize(uri, rules=path) == "http://example.com/"
    # Replaced by another file (a rename, as editors save).
    other = tmp_path / "new.rules"
    other.write_text("example.com drop-params nothing\n")
    os.replace(other, path)
    assert urinorm.normalize(uri, rules=path) == uri
    path.unlink()
    with pytest.raises(FileNotFoundError):
        urinorm.normalize(uri, rules=path)


def test_a_rule_that_breaks_the_uri_rejects_it(tmp_path):
    path = tmp_path / "break.rules"
    path.write_text("x.example rewrite-path ^/x(.*)$ /%zz$1\n")
    with pytest.raises(urinorm.InvalidUri) as caught:
        urinorm.normalize("http://x.example/x1", rules=path)
    assert str(caught.value) == f"rule {path}:1 rewrite-path makes the URI invalid"
    assert urinorm.normalize("http://x.example/y", rules=path) == "http://x.example/y"
    result, _ = urinorm.normalize_batch(["http://x.example/x1", "http://x.example/y"], rules=path)
    assert result.to_pylist() == [None, "http://x.example/y"]


def _stub_literals() -> dict:
    """Each ``Literal[...]`` alias of the type stubs, by name, read with ast."""
    import ast
    import pathlib

    stub = pathlib.Path(urinorm.__file__).with_name("__init__.pyi")
    aliases = {}
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Subscript):
            if getattr(node.value.value, "id", None) == "Literal":
                items = node.value.slice
                items = items.elts if isinstance(items, ast.Tuple) else [items]
                aliases[node.target.id] = tuple(item.value for item in items)
    return aliases


def test_the_stubs_literal_names_are_the_modules():
    aliases = _stub_literals()
    assert aliases["RungName"] == urinorm.RUNGS
    assert aliases["PresetName"] == tuple(urinorm.PRESETS)
    assert aliases["TransformName"] == urinorm.TRANSFORMS
    for key in aliases["KeyName"]:
        urinorm.normalize_batch(["http://a.example/"], key=key)


def test_lenient_repairs_what_strict_rejects():
    assert urinorm.normalize(" http://a/ b ", lenient=True) == "http://a/%20b"
    assert urinorm.normalize("https://münchen.de/", lenient=True) == "https://xn--mnchen-3ya.de/"
    # Inside <…> a space is line wrapping: removed (RFC 3986 Appendix C).
    assert urinorm.surt("<http://www.a.example/x y>", lenient=True) == "example,a,www)/xy"
    assert urinorm.fingerprint(" http://a/ ", lenient=True) == urinorm.fingerprint("http://a/")
    with pytest.raises(urinorm.InvalidUri, match="space is not allowed"):
        urinorm.normalize(" http://a/ b ")
    # A valid reference is never changed by the repairs.
    assert urinorm.normalize("http://a/%7e", lenient=True) == urinorm.normalize("http://a/%7e")


def test_resolve_reads_as_the_options_say():
    assert urinorm.resolve("https://ex.com/dir/", "/über/ä.html", lenient=True) == (
        "https://ex.com/%C3%BCber/%C3%A4.html"
    )
    assert urinorm.resolve("http://a/b/c/d;p?q", "http:g") == "http:g"
    assert urinorm.resolve("http://a/b/c/d;p?q", "http:g", non_strict=True) == "http://a/b/c/g"
    with pytest.raises(urinorm.InvalidUri) as e:
        urinorm.resolve("https://ex.com/dir/", "/über/")
    assert e.value.argument == "reference"
    # A lenient error counts its byte in the text as given, as normalize's does.
    for base, reference in [("  http://a:x/", "b"), ("http://a/", "  http://a:x/")]:
        with pytest.raises(urinorm.InvalidUri) as e:
            urinorm.resolve(base, reference, lenient=True)
        assert e.value.offset == 11, e.value
    with pytest.raises(urinorm.InvalidUri) as e:
        urinorm.normalize("  http://a:x/", lenient=True)
    assert e.value.offset == 11


def test_one_base_for_a_batch():
    result, valid = urinorm.normalize_batch(
        ["../g", None, "x y", "HTTP://B/"], base="http://a/b/c/d", lenient=True
    )
    assert result.to_pylist() == ["http://a/b/g", None, "http://a/b/c/x%20y", "http://b/"]
    prints = urinorm.fingerprint_batch(["../g"], base="http://a/b/c/d")
    assert prints[0].as_py() == urinorm.fingerprint("http://a/b/g")
    with pytest.raises(urinorm.InvalidUri, match="the base: ") as e:
        urinorm.normalize_batch(["a"], base="rel/x")
    assert e.value.argument == "base"


def test_resolve_batch_rows():
    bases = ["http://a/b/c", "http://a/", None, "rel", "http://a/b/c/d;p?q"]
    references = ["../d", "x y", "/z", "q", "http:g"]
    result, valid = urinorm.resolve_batch(bases, references)
    assert result.to_pylist() == ["http://a/d", None, None, None, "http:g"]
    assert valid.to_pylist() == [True, False, False, False, True]
    result, _ = urinorm.resolve_batch(
        pa.chunked_array([bases[:2], bases[2:]]),
        pa.array(references).dictionary_encode(),
        lenient=True,
        non_strict=True,
    )
    assert result.to_pylist() == ["http://a/d", "http://a/x%20y", None, None, "http://a/b/c/g"]
    prints, _ = urinorm.resolve_batch(bases, references, fingerprints=True)
    assert prints[0].as_py() == urinorm.fingerprint("http://a/d")
    with pytest.raises(ValueError, match=r"references and bases are of different lengths \(\[2, 1\]\)"):
        urinorm.resolve_batch(["http://a/"], ["x", "y"])
    with pytest.raises(TypeError, match="not one string"):
        urinorm.resolve_batch("http://a/", ["x"])


def test_key_batch_joins_each_columns_key():
    pages = ["HTTP://A/", "http://a/", None, "http://a/", "http://a b/"]
    links = ["http://B/x", "http://b/x", "http://c/", "x y", "http://c/"]
    result, valid, why = urinorm.key_batch([pages, links], reasons=True)
    assert result.to_pylist() == ["http://a/\thttp://b/x", "http://a/\thttp://b/x", None, None, None]
    assert valid.to_pylist() == [True, True, False, False, False]
    assert why.to_pylist() == [
        None,
        None,
        None,
        "columns[1]: space is not allowed in a URI at byte 1",
        "columns[0]: space is not allowed in a URI at byte 8",
    ]
    result, _ = urinorm.key_batch([pages, links], preset="aggressive", delimiter=" ", lenient=True)
    assert result.to_pylist()[3] == "https://a/ x%20y"
    # One column: the fingerprints are fingerprint_batch's.
    prints, _ = urinorm.key_batch([links], fingerprints=True)
    assert prints.to_pylist() == urinorm.fingerprint_batch(links).to_pylist()
    assert urinorm.key_batch([pa.array(pages), pa.array(links, pa.large_string())])[0].type == pa.large_string()
    with pytest.raises(TypeError):
        urinorm.key_batch(["http://a/", "http://b/"])
    with pytest.raises(ValueError, match="different lengths"):
        urinorm.key_batch([pages, links[:2]])
    with pytest.raises(ValueError, match="one byte"):
        urinorm.key_batch([pages, links], delimiter="->")
    with pytest.raises(ValueError, match="no columns"):
        urinorm.key_batch([])


def test_key_batch_keys_the_rows_dedup_key_fields_keeps(cli, sample, tmp_path):
    lines = [line for _, line in sample]
    rows = [(lines[i % 500], lines[(i * 3) % 200]) for i in range(3000)]
    # Other spellings of the same keys: the scheme in capitals.
    rows += [(a.replace("http://", "HTTP://", 1), b) for a, b in rows[:600]]
    path = tmp_path / "links.tsv"
    path.write_text("".join(f"{a}\t{b}\n" for a, b in rows))
    run = subprocess.run(
        [str(cli), "dedup", "--field", "1", "--key-fields", "1,2", "--fetchable=never", str(path)],
        capture_output=True,
        text=True,
    )
    assert run.returncode in (0, 1), run.stderr
    keys, _ = urinorm.key_batch([[a for a, _ in rows], [b for _, b in rows]])
    firsts, seen = [], set()
    for (a, b), key in zip(rows, keys.to_pylist()):
        if key is not None and key not in seen:
            seen.add(key)
            firsts.append(f"{urinorm.normalize(a)}\t{b}")
    assert run.stdout.splitlines() == firsts
    assert len(firsts) <= 3000, "the capitalized rows merged"
