"""The examples in the READMEs, the book (docs/src) and urinorm's docstrings run as written."""

import doctest
import importlib

import pytest

from conftest import ROOT, polars_plugin_or_skip

# The pages whose `>>>` examples run: the READMEs and every page of the book.
PAGES = ["python/README.md", "README.md"] + sorted(
    str(path.relative_to(ROOT)) for path in (ROOT / "docs" / "src").rglob("*.md")
)
# Pages that must hold examples (a page that lost them all fails).
WITH_EXAMPLES = {"python/README.md", "docs/src/python.md"}


def test_the_book_is_walked():
    assert "docs/src/python.md" in PAGES


@pytest.mark.parametrize("page", PAGES)
def test_page_examples(page):
    if "urinorm.polars" in (ROOT / page).read_text():
        polars_plugin_or_skip()
    failures, tried = doctest.testfile(str(ROOT / page), module_relative=False)
    assert failures == 0
    if page in WITH_EXAMPLES:
        assert tried > 0


@pytest.mark.parametrize("module", ["urinorm", "urinorm.duckdb", "urinorm.polars"])
def test_docstring_examples(module):
    if module == "urinorm.polars":
        polars_plugin_or_skip()
    failures, tried = doctest.testmod(importlib.import_module(module))
    assert tried > 0
    assert failures == 0
