#!/usr/bin/env python3
"""Appends the metadata footer DuckDB requires on a ``.duckdb_extension``.

    append_metadata.py LIBRARY OUTPUT [--platform linux_amd64]
        [--capi-version v1.5.6] [--extension-version v0.1.0]

DuckDB reads the last 512 bytes of the file (ParseExtensionMetaData in
src/main/extension/extension_load.cpp): eight 32-byte fields, NUL-padded,
which it reverses, then 256 bytes of signature. In file order:

    field 8, 7, 6   empty (unused)
    field 5         ABI type: "C_STRUCT", the stable C extension API, loaded
                    by any DuckDB whose C API is at least field 3's version
                    ("CPP" and "C_STRUCT_UNSTABLE" pin one DuckDB version)
    field 4         the extension's version, shown by duckdb_extensions()
    field 3         for C_STRUCT, the C API version the extension was built
                    against and asks for on load (its entrypoint passes the
                    same string to get_api): v1.5.6, the last v1 version
    field 2         the platform, which must equal DuckDB's own
                    (`PRAGMA platform`: linux_amd64 for the Python wheel)
    field 1         the magic value "4"
    signature       256 zero bytes: the file is unsigned, so it loads only
                    with allow_unsigned_extensions

Before those 512 bytes comes the 22-byte header of a WebAssembly custom
section named ``duckdb_signature`` (DuckDB-Wasm reads the footer as that
section; native DuckDB ignores it), as DuckDB's own
append_extension_metadata tooling writes it: 534 bytes in all.
"""

import argparse
import platform
import shutil
import sys


def field(text: str) -> bytes:
    raw = text.encode("ascii")
    if len(raw) > 32:
        sys.exit(f"metadata field longer than 32 bytes: {text!r}")
    return raw.ljust(32, b"\0")


def default_platform() -> str:
    machine = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine()]
    system = {"Linux": "linux", "Darwin": "osx"}[platform.system()]
    return f"{system}_{machine}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library")
    parser.add_argument("output")
    parser.add_argument("--platform", default=default_platform())
    parser.add_argument("--capi-version", default="v1.5.6")
    parser.add_argument("--extension-version", default="v0.1.0")
    args = parser.parse_args()

    shutil.copyfile(args.library, args.output)
    footer = bytearray()
    # The WebAssembly custom section: id 0, size 531 (LEB128 0x93 0x04) =
    # 1 + 16 (name) + 2 + 512; name length 16; the name; payload size 512.
    footer += b"\x00" + b"\x93\x04" + b"\x10" + b"duckdb_signature" + b"\x80\x04"
    for text in ("", "", "", "C_STRUCT", args.extension_version, args.capi_version, args.platform, "4"):
        footer += field(text)
    footer += b"\0" * 256
    assert len(footer) == 534
    with open(args.output, "ab") as out:
        out.write(footer)


if __name__ == "__main__":
    main()
