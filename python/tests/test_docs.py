"""The examples in the READMEs and in urinorm's docstrings run as written."""

import doctest
import importlib

import pytest

from conftest import ROOT


@pytest.mark.parametrize("readme", ["python/README.md", "README.md"])
def test_readme_examples(readme):
    failures, tried = doctest.testfile(str(ROOT / readme), module_relative=False)
    assert tried > 0
    assert failures == 0


@pytest.mark.parametrize("module", ["urinorm", "urinorm.duckdb", "urinorm.polars"])
def test_docstring_examples(module):
    failures, tried = doctest.testmod(importlib.import_module(module))
    assert tried > 0
    assert failures == 0
