"""Imported files read as skeletons: the bodies of their functions parsed when a call runs them."""

from __future__ import annotations

import pickle
from pathlib import Path

import libcst as cst
import pytest

from gradguard.config import Settings
from gradguard.engine import analyse_document, project_index
from gradguard.analysis.names import decorator_heads
from gradguard.source.document import Document
from gradguard.source.parser import parse_module
from gradguard.source.skeleton import LazyBlock, LazyFunctionDef, parse_skeleton, unparsed_bodies

_BODY = "    a = 1\n    b = 2\n    c = 3\n    return a + b + c\n"

TEXTS = {
    "plain": "import torch\n\n\ndef f(x):\n" + _BODY + "\n\nY = 1\n",
    "no final line break": "def f(x):\n" + _BODY.rstrip("\n"),
    "crlf": ("def f(x):\n" + _BODY + "class A:\n    def g(self):\n        x = 1\n        y = 2\n        z = 3\n"
             "        return x\n").replace("\n", "\r\n"),
    # a file indented by two, whose nested blocks are indented by four more
    "two-space methods": "class A:\n  def g(self, xs):\n    for x in xs:\n        if x:\n            x = 1\n"
                         "        y = 2\n    return xs\n\n  def h(self):\n    pass\n",
    "tabs": "class A:\n\tdef g(self):\n\t\ta = 1\n\t\tb = 2\n\t\tif a:\n\t\t\tb = 3\n\t\treturn b\n",
    "comments before and after the body": "def f(x):  # header\n    # first\n# at column zero\n\n"
                                          + _BODY + "    # footer of f\n# the module's\nZ = 2\n",
    "a decorated function first in the body": "def outer():\n    @staticmethod\n    def inner():\n        return 1\n"
                                             "    x = inner\n    return x\n",
    "a docstring": 'def f():\n    """Doc\n\n    more.\n    """\n    return 1\n',
    "multi-line header": "def f(\n    a,  # a\n    # no more\n) -> int:\n" + _BODY,
    "async, nested classes, compound statements": (
        "import sys\nif sys.version_info > (3,):\n    async def f():\n" + _BODY.replace("    ", "        ")
        + "elif True:\n    pass\nelse:\n    def g():\n" + _BODY.replace("    ", "        ")
        + "try:\n    import x\nexcept ImportError:\n    def h():\n" + _BODY.replace("    ", "        ")
        + "finally:\n    pass\nclass A:\n    class B:\n        def m(self):\n"
        + _BODY.replace("    ", "            ") + "with open('f') as handle:\n    def w():\n"
        + _BODY.replace("    ", "        ") + "for i in []:\n    pass\nelse:\n    def e():\n"
        + _BODY.replace("    ", "        ")),
    "one-line and short bodies": "def f(): return 1\ndef g():\n    return 2\nclass A: pass\n",
    "decorators and annotations": "import functools\n\n\nclass A:\n    @functools.lru_cache(maxsize=2)  # cached\n"
                                  "    # between\n    @staticmethod\n    def f(a: 'int | None' = None, *args: int,\n"
                                  "          **kw: str) -> tuple[int, str]:  # header\n"
                                  + _BODY.replace("    ", "        "),
    "a registry decorator of the file": "REG = []\n\n\ndef register(f):\n    REG.append(f)\n    return f\n\n\n"
                                        "@register\ndef g(x):\n" + _BODY,
    "bodies on a multi-line header's last line": "def f(\n    a,\n    b,\n): return a\n\n\n@dec\ndef g(\n"
                                                  "    a): return 1\n",
    "a long chain": "def f(x):\n    a = 1\n    b = " + " + ".join(["x"] * 1200) + "\n    c = 3\n    return b\n",
}


@pytest.mark.parametrize("name", TEXTS)
def test_a_skeleton_gives_back_its_text_and_the_tree_of_a_whole_parse(name: str) -> None:
    text = TEXTS[name]
    whole = parse_module(text)
    skeleton = parse_skeleton(text)
    assert skeleton.code == whole.code  # its bodies parsed on the way, as libcst's positions parse them
    assert unparsed_bodies(skeleton) == 0
    assert [_kind(n) for n in _statements(skeleton)] == [_kind(n) for n in _statements(whole)]


def _kind(node: cst.CSTNode) -> type:
    return cst.IndentedBlock if isinstance(node, LazyBlock) else cst.FunctionDef if isinstance(node, LazyFunctionDef) \
        else type(node)


def _statements(module: cst.Module) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []
    pending: list[cst.CSTNode] = [module]
    while pending:
        node = pending.pop()
        found.append(node)
        pending += [c for c in node.children if isinstance(c, (cst.BaseStatement, cst.BaseSuite, cst.Module))]
    return found


def test_a_body_is_parsed_at_its_first_read_and_is_then_the_same() -> None:
    text = "def f(x):\n" + _BODY + "def g(x):\n" + _BODY.replace("a + b", "a * b")
    module = parse_skeleton(text)
    f, g = module.body
    assert isinstance(f.body, LazyBlock) and unparsed_bodies(module) == 2
    first = f.body.body
    assert unparsed_bodies(module) == 1 and f.body.body is first  # g's still waits
    assert cst.Module(body=[f]).code == "def f(x):\n" + _BODY


def test_a_function_s_header_is_parsed_at_its_first_read_its_decorators_known_before() -> None:
    """A function of the skeleton is its name until a field of its header is read: then its
    header is parsed (its body still waits); which decorators it has is known from `ast`."""
    text = "import functools\n\n\n@functools.lru_cache(maxsize=2)\n@staticmethod\ndef f(a: int = 1) -> int:\n" + _BODY
    module = parse_skeleton(text)
    f = module.body[1]
    heads = (("functools.lru_cache", True), ("staticmethod", False))
    assert isinstance(f, LazyFunctionDef) and f.name.value == "f" and decorator_heads(f) == heads and not f.parsed
    assert [p.name.value for p in f.params.params] == ["a"] and f.parsed
    assert isinstance(f.body, LazyBlock) and not f.body.parsed and decorator_heads(f) == heads
    assert f.body.body[-1].body[0].value.left.left.value == "a" and module.code == text


def test_a_function_a_decorator_of_its_file_registers_keeps_its_header_in_the_skeleton() -> None:
    """`@register` runs at the definition, given the function: its header is parsed with the
    skeleton, its body still waits."""
    module = parse_skeleton(TEXTS["a registry decorator of the file"])
    g = module.body[-1]
    assert type(g) is cst.FunctionDef and isinstance(g.body, LazyBlock) and unparsed_bodies(module) == 2
    assert isinstance(module.body[1], LazyFunctionDef)  # `register` itself: decorated by nothing of the file


@pytest.mark.parametrize("text", ["def f(x):\r" + _BODY, "def f(x:\n" + _BODY, "Y = 1\n"])
def test_what_a_skeleton_cannot_stand_for_is_parsed_whole(text: str) -> None:
    """A lone carriage return (lines counted otherwise), a syntax error (the same error), no body
    long enough to wait."""
    try:
        expected = parse_module(text).code
    except cst.ParserSyntaxError:
        with pytest.raises(cst.ParserSyntaxError):
            parse_skeleton(text)
        return
    module = parse_skeleton(text)
    assert module.code == expected and not any(isinstance(s, cst.FunctionDef) and isinstance(s.body, LazyBlock)
                                               for s in module.body)


def test_a_skeleton_survives_pickling_and_copies() -> None:
    """An installed library's reading is stored in the user's cache; a codemod copies nodes."""
    text = "def f(x):\n" + _BODY + "def g(x):\n" + _BODY
    module = parse_skeleton(text)
    module.body[0].body.body  # f's body parsed, g's not
    again = pickle.loads(pickle.dumps(module))
    assert unparsed_bodies(again) == 1 and again.code == text
    assert module.deep_clone().code == text
    changed = module.body[1].body.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
    assert cst.Module(body=[module.body[1].with_changes(body=changed)]).code == "def g(x):\n    pass\n"


def test_an_imported_file_s_functions_no_call_runs_are_never_parsed_and_a_finding_in_one_it_runs_is_placed(
        tmp_path: Path) -> None:
    (tmp_path / "layers.py").write_text(
        "import torch\n\n\ndef unused(x):\n    y = x * 2\n    y = y + 1\n    y = y - 1\n    return y.exp()\n\n\n"
        "def gate(x):\n    # the sigmoid saves its output\n    y = x * 1\n    z = y + 0\n    return z.sigmoid()\n")
    train = tmp_path / "train.py"
    train.write_text("import torch\nfrom layers import gate\nx = torch.ones(2, requires_grad=True)\n"
                     "y = gate(x)\ny.mul_(2)\ny.sum().backward()\n")
    index = project_index(use_jedi=False)
    [finding] = analyse_document(Document.parse(str(train), train.read_text()), Settings(), index)
    assert (finding.code, finding.span.start.line) == ("GG001", 5)
    assert [(Path(r.filename).name, r.span.start.line) for r in finding.related][:1] == [("layers.py", 15)]
    layers = index.definitions_of(tmp_path / "layers.py")
    unused = layers.globals["unused"].node
    assert isinstance(unused.body, LazyBlock) and not unused.body.parsed
    assert index.parsed(str(tmp_path / "layers.py"), (tmp_path / "layers.py").read_text()) is None  # no document's tree


def test_a_file_the_process_analyses_too_is_read_whole_and_its_tree_reused(tmp_path: Path) -> None:
    (tmp_path / "layers.py").write_text("class Base:\n    pass\n\n\ndef gate(x):\n" + _BODY)
    (tmp_path / "train.py").write_text("from layers import Base\nclass Train(Base):\n    pass\n")
    index = project_index(use_jedi=False)
    index.will_analyse([str(tmp_path / "layers.py")])
    index.definitions_of(tmp_path / "train.py")
    tree = index.parsed(str(tmp_path / "layers.py"), (tmp_path / "layers.py").read_text())
    assert tree is not None and unparsed_bodies(tree) == 0 and not isinstance(tree.body[1].body, LazyBlock)


@pytest.mark.parametrize("body", [
    "    s = '" + "(" * 250 + "'\n    y = x * 1\n    z = y + 0\n    return z.sigmoid()\n",  # brackets in a string
    "    y = x * 1\n    z = y + 0\n    w = 1\n    return z.sigmoid() \\\n\n",  # a last line continued
])
def test_an_imported_body_the_whole_parse_takes_or_refuses_is_read_as_it_would_be(tmp_path: Path, body: str) -> None:
    """What libcst refuses in a body is refused when the file is read, as a whole parse refuses it
    (the file unread, its names unknown), never at the body's first read in the middle of an analysis."""
    text = "import torch\n\n\ndef gate(x):\n" + body + "\n\nZ = 1\n"
    (tmp_path / "layers.py").write_text(text)
    train = tmp_path / "train.py"
    train.write_text("import torch\nfrom layers import gate\nx = torch.ones(2, requires_grad=True)\n"
                     "y = gate(x)\ny.mul_(2)\ny.sum().backward()\n")
    findings = analyse_document(Document.parse(str(train), train.read_text()), Settings(), project_index(use_jedi=False))
    try:
        parse_module(text)
    except ValueError:
        assert findings == []  # unreadable: `gate` is unknown
        return
    assert [(f.code, f.span.start.line) for f in findings] == [("GG001", 5)]
