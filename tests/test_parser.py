"""The parser every tree of gradguard comes from: libcst's, without per-node validation."""

from __future__ import annotations

import libcst as cst
import pytest

from gradguard.source.document import Document
from gradguard.source.parser import TooDeeplyNested, parse_module

from helpers import MODELS, made_by


@pytest.mark.parametrize("relative", ["timm/models/vision_transformer.py", "torchvision/models/resnet.py"])
def test_trees_equal_libcsts_own(relative: str) -> None:
    path = MODELS / relative
    made_by("make models", path)
    text = path.read_text(encoding="utf-8")
    ours = parse_module(text)
    assert ours.code == text
    assert ours.deep_equals(cst.parse_module(text))


def test_nodes_built_outside_a_parse_are_still_validated() -> None:
    parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("x", lpar=[cst.LeftParen()])  # a parenthesis left open


def test_syntax_errors_are_still_refused() -> None:
    for text in ("def f(:\n    pass\n", "x = (1,\n", "return = 3\n", "f(**)\n"):
        with pytest.raises(cst.ParserSyntaxError):
            parse_module(text)


def test_brackets_nested_deeper_than_cpython_allows_are_refused_before_libcst_sees_them() -> None:
    text = "x = " + "(" * 300 + "1" + ")" * 300 + "\n"
    with pytest.raises(TooDeeplyNested):
        parse_module(text)
    document = Document.parse("deep.py", text)
    assert document.module is None
    assert document.syntax_problem is not None and document.syntax_problem.message == "too many nested parentheses"
