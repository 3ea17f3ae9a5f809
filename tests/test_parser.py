"""The parser every tree of gradguard comes from: libcst's, without per-node validation."""

from __future__ import annotations

import libcst as cst
import pytest

from gradguard.source.document import Document
from gradguard.source.parser import SKIPPED, TooDeeplyNested, parse_module

from helpers import MODELS, made_by


@pytest.mark.parametrize("relative", ["timm/models/resnet.py", "torchvision/models/resnet.py"])
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


TABLE_ENTRY = "    'vit_{i}.augreg_in21k': _cfg(  # pretrained (augreg) on in21k\n" \
              "        hf_hub_id='timm/', mean=OPENAI_CLIP_MEAN, num_classes={i}, crop_pct=0.9),\n"
BUG = "import torch\nx = torch.ones(3, requires_grad=True)\ny = torch.sigmoid(x)\ny.mul_(2)\ny.sum().backward()\n"


CFG = "def _cfg(url='', **kwargs):\n    return {'url': url, **kwargs}\n\n\n"


@pytest.mark.parametrize("entry, defined, skipped", [
    (TABLE_ENTRY, CFG, True),
    (TABLE_ENTRY, "", False),  # `_cfg` not defined here: what it returns is not known
    (TABLE_ENTRY, CFG.replace("{'url': url, **kwargs}", "torch.tensor([1.0], requires_grad=True)"), False),
    (TABLE_ENTRY.replace("_cfg(", "Cfg("), CFG, False),  # a class: the table holds objects
    (TABLE_ENTRY.replace("_cfg(", "timm._cfg("), CFG, False),
    (TABLE_ENTRY.replace("_cfg(", "nn.Sequential("), CFG, False),
    (TABLE_ENTRY.replace("_cfg(", "fill_("), CFG, False),  # an in-place op's name
    (TABLE_ENTRY.replace("crop_pct=0.9", "inplace=True"), CFG, False),
    (TABLE_ENTRY.replace("crop_pct=0.9", "act_inplace=True"), CFG, False),
    (TABLE_ENTRY.replace("mean=OPENAI_CLIP_MEAN", "mean=clip_mean"), CFG, False),  # a name of unknown value
])
def test_a_long_table_of_constants_and_plain_calls_is_skipped_other_lines_kept(entry: str, defined: str,
                                                                                skipped: bool) -> None:
    """A `default_cfgs`-like table of more than `MAX_LITERAL` characters, made of constants, keyword
    arguments, calls of plain lower-case names of the file's own functions that name nothing of
    torch, upper-case constants and comments, is not parsed (no tensor's history is in it); the
    lines after it keep their positions."""
    from gradguard.config import Settings
    from gradguard.engine import analyse_document, project_index

    table = defined + "default_cfgs = {\n" + "".join(entry.format(i=i) for i in range(120)) + "}\n"
    module = parse_module(table + BUG)
    assert (SKIPPED in module.code) == skipped
    [finding] = analyse_document(Document.parse("t.py", table + BUG), Settings(), project_index(use_jedi=False))
    assert (finding.code, finding.span.start.line, finding.span.start.column) == ("GG001", table.count("\n") + 4, 0)


def test_a_long_word_costs_the_table_search_no_more_than_its_length() -> None:
    """Each word is tried as a table's token once, at its start (not at each of its characters)."""
    import time

    from gradguard.source.parser import long_literals

    text = "x = " + "a" * 40_000 + "\n"
    start = time.process_time()
    long_literals(text)
    assert time.process_time() - start < 0.5
