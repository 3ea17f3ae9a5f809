"""Where a file's functions are, found from its lines (`source.outline.scan`): what CPython's
`ast` says, or no answer where the scan is not sure (the skeleton then asks `ast`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradguard.source.lines import lines_of
from gradguard.source.outline import Outline, of_ast, scan
from gradguard.source.parser import python_ast

from test_skeleton import TEXTS

ROOT = Path(__file__).resolve().parent.parent

TRICKY = {
    "a def inside a string at column zero": 'class A:\n    x = """\ndef fake():\n    pass\n"""\n'
                                            "    def real(self):\n        a = 1\n        return a\n",
    "a bracket closed at column zero": "def f():\n    x = foo(\n1,\n2)\n    return x\n\n\ndef g():\n    return 1\n",
    "a backslash continuation": "def f():\n    x = 1 + \\\n2\n    return x\n",
    "quotes and hashes in strings": "def f():\n    s = \"a\\\"#b\"  # c\n    t = 'it\\'s'\n    u = r\"\\\"\"\n"
                                    "    return s\n",
    "an f-string's braces": "def f(x):\n    s = f\"{x!r:>{10}} (\"\n    return s\n",
    "a decorator's arguments over lines": "@dec(\n    a=1,  # one\n)\ndef f():\n    a = 1\n    return a\n",
    "a string going on after the body's last line": 'def f():\n    return """a\nb\n"""\nX = 1\n',
    "a name `match`": "match = 1\nmatch(x)\n\n\ndef f():\n    a = 1\n    return a\n",
    "CJK and emoji": "def 函数(x):\n    s = \"中文 # 不是注释 🎉\"\n    return s  # 注释\n",
    "a nested function": "def f():\n    def g():\n        return 1\n    return g\n",
    "crlf and a class decorator": "@dataclass\r\nclass A:\r\n    @property\r\n    def x(self):\r\n        a = 1\r\n"
                                  "        return a\r\n",
}

UNSURE = {
    "a tab in an indentation": "class A:\n\tdef g(self):\n\t\treturn 1\n",
    "a match statement": "match x:\n    case 1:\n        def f():\n            a = 1\n            return a\n",
    "a decorator that is a subscript": "@table['x']\ndef f():\n    a = 1\n    return a\n",
    "a decorator calling a call": "@make(1)(2)\ndef f():\n    a = 1\n    return a\n",
}


def _used(outline: Outline) -> tuple[list[tuple[object, ...]], set[str]]:
    """What the skeleton reads of an outline: a function with its body on a header line only counts."""
    return [(f.name, f.asynchronous, f.inline) + (() if f.inline else (f.start, f.header, f.first, f.end, f.heads))
            for f in outline.functions], outline.own


def _by_ast(text: str) -> Outline:
    return of_ast(python_ast(text), lines_of(text))


@pytest.mark.parametrize("name", [*TRICKY, *(n for n in TEXTS if n != "tabs")])
def test_the_scan_finds_what_ast_finds(name: str) -> None:
    text = {**TEXTS, **TRICKY}[name]
    scanned = scan(text)
    assert scanned is not None
    assert _used(scanned) == _used(_by_ast(text))


@pytest.mark.parametrize("name", [*UNSURE, "tabs"])
def test_the_scan_gives_no_answer_where_it_is_not_sure(name: str) -> None:
    assert scan({**TEXTS, **UNSURE}[name]) is None


def test_the_scan_agrees_with_ast_on_this_repository() -> None:
    """Every Python file of the server and of the tests that Python parses: the same outline, and
    an answer for nearly all."""
    files = sorted([*(ROOT / "server").rglob("*.py"), *(ROOT / "tests").rglob("*.py")])
    answered = 0
    for file in files:
        text = file.read_text(encoding="utf-8")
        try:
            by_ast = _by_ast(text)
        except SyntaxError:
            continue  # a half-typed file of the editor's tests
        scanned = scan(text)
        if scanned is not None:
            answered += 1
            assert _used(scanned) == _used(by_ast), file
    assert answered >= 0.95 * len(files) > 500
