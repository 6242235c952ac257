"""The examples in the READMEs and in urinorm's docstrings run as written."""

import doctest

import pytest

import urinorm
from conftest import ROOT


@pytest.mark.parametrize("readme", ["python/README.md", "README.md"])
def test_readme_examples(readme):
    failures, tried = doctest.testfile(str(ROOT / readme), module_relative=False)
    assert tried > 0
    assert failures == 0


def test_docstring_examples():
    failures, tried = doctest.testmod(urinorm)
    assert tried > 0
    assert failures == 0
