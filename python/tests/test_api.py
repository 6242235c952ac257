"""The Python API, call by call: rungs, presets, transforms, keys, errors."""

import re

import pytest

import urinorm


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
        (lambda: urinorm.resolve("a/b", "c"), "base URI has no scheme at byte 0"),
        (lambda: urinorm.resolve("http://a/", "b c"), "space is not allowed in a URI at byte 1"),
    ],
)
def test_invalid_uri_messages(call, message):
    with pytest.raises(urinorm.InvalidUri, match="^" + re.escape(message) + "$"):
        call()


def test_the_syntax_rung_keeps_a_large_port():
    # §3.2.3 sets no bound; only the scheme rung knows http's ports are TCP ports.
    assert urinorm.normalize("http://a:99999/", rung="syntax") == "http://a:99999/"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rung": "schema"}, "unknown rung 'schema' (choose string, syntax, scheme or protocol)"),
        ({"preset": "wild"}, "unknown preset 'wild' (choose safe or aggressive)"),
        ({"with_": "strip_www"}, "unknown transform 'strip_www' (see `urinorm transforms`)"),
        ({"without": ["drop-fragment", "x"]}, "unknown transform 'x' (see `urinorm transforms`)"),
        (
            {"rung": "scheme", "preset": "safe"},
            "a preset, added or removed transforms and a tracking list need the protocol rung, not the scheme rung",
        ),
        (
            {"rung": "string", "tracking_params": ["ref"]},
            "a preset, added or removed transforms and a tracking list need the protocol rung, not the string rung",
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
    assert len(urinorm.TRANSFORMS) == 17
    assert set(urinorm.PRESETS) == {"safe", "aggressive"}
    assert set(urinorm.PRESETS["safe"]) < set(urinorm.PRESETS["aggressive"])
    assert set(urinorm.PRESETS["aggressive"]) <= set(urinorm.TRANSFORMS)
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
