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


def test_a_lone_surrogate_is_reported_where_it_is_as_when_only_its_region_is_parsed_again() -> None:
    """An editor may send half of an emoji (a lone UTF-16 surrogate): no parser takes it. The file's
    problem is placed at that character, as the editor's re-parse of its region places it."""
    from gradguard.source.syntax import python_syntax_problem

    text = "import torch\n\nx = torch.ones(3)\ny = 'half \ud83d of an emoji'\n"
    problem = Document.parse("x.py", text).syntax_problem
    assert problem is not None and "surrogates not allowed" in problem.message
    assert (problem.position.line, problem.position.column) == (4, 10)
    region = python_syntax_problem("y = 'half \ud83d of an emoji'\n")
    assert region is not None and (region.position.line, region.position.column) == (1, 10)


def test_a_null_character_is_reported_where_it_is_as_when_only_its_region_is_parsed_again() -> None:
    """CPython refuses a null character anywhere in the text, naming no line: the problem is placed
    at that character, so a fresh open and an edited document's re-parse of its broken region agree."""
    from gradguard.config import Settings
    from gradguard.engine import OpenDocument, project_index

    text = 'import torch\n\nx = torch.ones(3)\n\nfrom typing #import Any\n\ndef f():\n    """``p\0ip``"""\n'
    project = project_index(use_jedi=False)
    fresh = OpenDocument("x.py").analyse(text, Settings(), project)
    edited = OpenDocument("x.py")
    edited.analyse(text.replace("#", "").replace("\0", ""), Settings(), project)
    edited.prepare(project)
    again = edited.analyse(text, Settings(), project)
    assert [(f.code, f.span.start.line, f.span.start.column) for f in fresh] == [("GG000", 8, 10)]
    assert [(f.code, f.span.start.line, f.span.start.column) for f in again] == [("GG000", 8, 10)]
