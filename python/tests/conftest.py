"""Fixtures shared by the tests: the repository's paths, the `urinorm`
command built from this tree, and the sample's lines as the command reads them."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "testdata" / "sample" / "urls.txt"


def read_lines(path: Path) -> list[tuple[int, str]]:
    """The non-blank lines of `path` with their 1-based numbers, as
    `urinorm` reads them: a leading BOM ignored, LF or CRLF endings."""
    text = path.read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [
        (number, line.removesuffix("\r"))
        for number, line in enumerate(lines, start=1)
        if line.removesuffix("\r")
    ]


def polars_plugin_or_skip() -> None:
    """Skips the calling test (or, at a module's top, the module) when the
    Polars plugin, a package of its own (python/polars), is not installed;
    with URINORM_REQUIRE_POLARS=1 (as CI runs) its absence fails instead."""
    try:
        import urinorm_polars  # noqa: F401
    except ImportError:
        if os.environ.get("URINORM_REQUIRE_POLARS") == "1":
            raise
        pytest.skip("the Polars plugin (python/polars) is not installed", allow_module_level=True)


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `urinorm` binary of this tree, built (or brought up to date) once;
    or the binary $URINORM_CLI names, taken as it is."""
    if os.environ.get("URINORM_CLI"):
        return Path(os.environ["URINORM_CLI"])
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--bin", "urinorm"], cwd=ROOT, check=True
    )
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "urinorm"


@pytest.fixture(scope="session")
def sample() -> list[tuple[int, str]]:
    """The sample's lines: 5,000 real URLs, 17 of them not URIs."""
    return read_lines(SAMPLE)
