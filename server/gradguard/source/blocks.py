"""An open document kept as blocks, so that an edit re-parses only the blocks it touched.

A block is a top-level statement, or a member of a top-level class (a 600-line class is not one
block: its methods are). Each block knows its lines. An edit is located by comparing the new
text's lines with the old ones; the blocks it overlaps, with one line of context on each side,
are parsed again together as a region: top-level statements on their own, class members inside
a stand-in `class _:` so that they keep their columns. libcst nodes carry no positions, so the
blocks that did not change are reused as they are, and positions are resolved once per block,
relative to its first statement line, and shifted as the block moves.

A region that no longer parses keeps its last good tree and carries the syntax error; the rest
of the file is still analysed. If the whole file does parse (the edit changed where blocks
begin or end), the whole file is parsed again.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

import libcst as cst

from gradguard.findings import Position, Span
from gradguard.source.document import Document
from gradguard.source.syntax import SyntaxProblem, python_syntax_problem
from gradguard.source.parser import parse_module, python_ast
from gradguard.source.positions import spans_of

_STAND_IN = "class _:\n"
_RECENT = 32  # re-parsed statements remembered as where the user types


@dataclass(frozen=True, eq=False)
class Block:
    """One statement of the document and the lines it owns (its leading comments included)."""

    node: cst.BaseStatement
    first: int  # first line it owns (1-based)
    start: int  # the line its own position starts on (libcst's: a decorated `def` starts at `def`)
    last: int  # last line it owns
    default_indent: str
    indent: str = ""  # a class member's indentation
    members: tuple[Block, ...] = ()  # a top-level class's body
    broken: bool = False  # in a region that stopped parsing: the last good tree stands in

    def stale(self, first: int, last: int) -> Block:
        """This block standing in, with its last good tree, for lines `first`..`last` that no longer parse."""
        return replace(self, first=first, last=last, broken=True,
                       members=tuple(m.stale(first, last) for m in self.members))

    def moved(self, delta: int) -> Block:
        if not delta:
            return self
        return Block(self.node, self.first + delta, self.start + delta, self.last + delta, self.default_indent,
                     self.indent, tuple(m.moved(delta) for m in self.members), self.broken)


_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b")  # a clause of the compound statement above


def _problem_from(text: str, lines: list[str], first: int) -> SyntaxProblem | None:
    """CPython's syntax error in `text`, whose lines before `first` are whole top-level statements
    that parse: only the text from line `first` on is compiled (an edit near the end of a long
    file, or in a late notebook cell, does not compile the whole file at every keystroke)."""
    suffix = "\n".join(lines[first - 1:])  # `lines` is `text` split at \n
    opening = next((line for line in lines[first - 1:] if line.strip() and not line.lstrip().startswith("#")), "")
    if first <= 1 or "__future__" in suffix or opening[:1].isspace() or _CONTINUES.match(opening):
        return python_syntax_problem(text)  # the edit may have joined the text to the statement above it
    problem = python_syntax_problem(suffix)
    if problem is None:
        return None
    return replace(problem, position=Position(problem.position.line + first - 1, problem.position.column))


def _parses(text: str) -> bool:
    """Whether libcst parses `text` (which CPython may refuse: syntax newer than this Python's)."""
    try:
        parse_module(text)
    except (cst.ParserSyntaxError, RecursionError, ValueError, MemoryError):
        return False
    return True


def _continues_below(lines: list[str], line: int) -> bool:
    """Whether (1-based) `line` of `lines` ends in a backslash that joins the next line to it."""
    return line >= 1 and lines[line - 1].rstrip("\r").endswith("\\")


def _common_ends(old: list[str], new: list[str]) -> tuple[int, int]:
    """How many lines at the start, and then at the end, `old` and `new` share (compared 64 at a
    time at C speed, then one by one)."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix + 64 <= limit and old[prefix:prefix + 64] == new[prefix:prefix + 64]:
        prefix += 64
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    limit -= prefix
    suffix = 0
    while suffix + 64 <= limit and old[len(old) - suffix - 64:len(old) - suffix] == \
            new[len(new) - suffix - 64:len(new) - suffix]:
        suffix += 64
    while suffix < limit and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    return prefix, suffix


def _text(lines: list[str], first: int, last: int) -> str:
    """Lines `first`..`last` (1-based) of text split at \\n, with their line ends."""
    text = "\n".join(lines[first - 1:last])
    return text + "\n" if last < len(lines) else text


@dataclass(frozen=True)
class _Statement:
    """One libcst statement seen through CPython's tree: statements sharing a line (`a = 1; b = 2`) are one."""

    first_ast: ast.stmt
    first: int  # its first line, decorators included
    anchor: int  # the line libcst's position of it starts on
    last: int


def _statements(statements: list[ast.stmt]) -> list[_Statement]:
    grouped: list[_Statement] = []
    for statement in statements:
        first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
        last = statement.end_lineno or statement.lineno
        if grouped and first <= grouped[-1].last:
            grouped[-1] = replace(grouped[-1], last=max(grouped[-1].last, last))
        else:
            grouped.append(_Statement(statement, first, statement.lineno, last))
    return grouped


def _blocks(nodes: list[cst.BaseStatement], statements: list[ast.stmt], first: int, last: int, offset: int,
            default_indent: str, indent: str, members: bool) -> list[Block] | None:
    """The blocks of one parsed region (`offset` turns the region's lines into the document's)."""
    seen = _statements(statements)
    if len(seen) != len(nodes):
        return None
    blocks: list[Block] = []
    for index, (node, statement) in enumerate(zip(nodes, seen)):
        owned_first = first if index == 0 else blocks[-1].last + 1
        owned_last = last if index == len(seen) - 1 else statement.last + offset
        inner: tuple[Block, ...] = ()
        body = statement.first_ast.body if isinstance(statement.first_ast, ast.ClassDef) else []
        if members and body and isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock):
            body_indent = node.body.indent if node.body.indent is not None else default_indent
            inner = tuple(_blocks(list(node.body.body), body, _statements(body)[0].first + offset,
                                  statement.last + offset, offset, default_indent, body_indent, members=False) or ())
        blocks.append(Block(node, owned_first, statement.anchor + offset, owned_last, default_indent, indent, inner))
    return blocks


class BlockTree:
    """The blocks of one open document, carried from version to version."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.lines: list[str] = []
        self.blocks: list[Block] = []
        self.module: cst.Module | None = None
        self.replaced: list[cst.CSTNode] = []
        self._problem: SyntaxProblem | None = None
        self._where: dict[cst.CSTNode, Block] = {}  # block statement -> its block in this version
        self._owner: dict[cst.CSTNode, cst.CSTNode] = {}  # node -> the block statement it lies in
        self._positions: dict[cst.CSTNode, dict[cst.CSTNode, Span]] = {}  # per block statement, from its start
        self._unsplit: str | None = None  # parsed whole, not split into blocks yet: the text
        self._whole: Document | None = None  # CPython refuses the text libcst parsed: no blocks
        # the statements of the blocks the last edits re-parsed, oldest first (where the user types)
        self._recent: dict[cst.CSTNode, None] = {}

    # ---- versions -----------------------------------------------------------------------

    def update(self, text: str, parsed: cst.Module | None = None) -> Document:
        """The document for `text`, re-parsing only what changed since the previous version
        (nothing, if it has to be parsed whole and its tree is `parsed` already).

        `replaced` then lists the statements of the previous version that this one no longer has.
        """
        lines = text.split("\n")  # fast, and exact: text with lone \r line ends is always parsed whole
        self.split()
        self.replaced = []
        if self.module is None or not self.blocks or "\r" in text and text.count("\r") != text.count("\r\n") \
                or not self._reparse_region(lines):
            self._parse_whole(text, parsed)
        elif (first := next((top.first for top in self.blocks if any(b.broken for b in (top, *top.members))),
                            None)) is not None:
            self._problem = _problem_from(text, lines, first)
            if self._problem is None:
                self._parse_whole(text, parsed)
        else:  # every block parses (an edit may have deleted the only one that did not)
            self._problem = None
        self.lines = lines
        self._index_blocks()
        return self._document(text)

    def _index_blocks(self) -> None:
        self._where = {b.node: b for top in self.blocks for b in (top, *top.members)}
        for gone in [n for n in self._positions if n not in self._where]:
            for node in self._positions.pop(gone):
                if self._owner.get(node) is gone:
                    del self._owner[node]

    def _parse_whole(self, text: str, parsed: cst.Module | None) -> None:
        """Parse `text` whole (unless `parsed` is its tree); it is split into blocks when first
        needed (a position asked for, the next version): not before its first findings are out."""
        self.replaced = [b.node for b in self.blocks]
        document = Document.parse(self.filename, text, parsed)
        self.blocks, self.module, self._problem = [], document.module, document.syntax_problem
        self._unsplit = text if document.module is not None else None
        self._whole = None

    def split(self) -> None:
        """Split the tree parsed whole into blocks, by CPython's lines of its statements."""
        text, self._unsplit = self._unsplit, None
        if text is None or self.module is None:
            return
        try:
            tree = python_ast(text)
            blocks = _blocks(list(self.module.body), tree.body, 1, len(self.lines), 0,
                             self.module.default_indent, "", members=True)
        except (SyntaxError, RecursionError, ValueError, MemoryError):
            blocks = None  # libcst accepts what CPython refuses
        if blocks is None:  # no blocks: every version is parsed whole, positions found in the whole tree
            self._whole = Document(self.filename, text, module=self.module)
            return
        self.blocks = blocks
        self._index_blocks()

    def _reparse_region(self, lines: list[str]) -> bool:
        """Re-parse the blocks the edit touched; False when the whole file must be parsed again."""
        old = self.lines
        prefix, suffix = _common_ends(old, lines)
        if prefix == len(old) == len(lines):
            return True  # the same text
        delta = len(lines) - len(old)
        low, high = max(prefix, 1), min(len(old) - suffix + 1, len(old))
        touched = [i for i, b in enumerate(self.blocks) if b.first <= high and b.last >= low]
        if not touched:
            return False
        i, j = touched[0], touched[-1]
        outer = self.blocks[i]
        if i == j and outer.members and outer.members[0].first <= low and high <= outer.members[-1].last \
                and not outer.broken:
            inner = [k for k, m in enumerate(outer.members) if m.first <= high and m.last >= low]
            k, m = inner[0], inner[-1]
            first, last = outer.members[k].first, outer.members[m].last + delta
            members = self._parse_members(outer.members[k:m + 1], lines, first, last)
            if not members:  # a member that does not parse, or lines no member holds any longer
                members = [b.stale(first, last) for b in outer.members[k:m + 1]]
            else:
                self.replaced = [b.node for b in outer.members[k:m + 1]]
            new_members = (*outer.members[:k], *members, *(b.moved(delta) for b in outer.members[m + 1:]))
            node = outer.node
            if self.replaced:
                node = node.with_changes(body=node.body.with_changes(body=[b.node for b in new_members]))
            new_outer = replace(outer, node=node, last=outer.last + delta, members=new_members)
            self._splice(i, i, [new_outer], delta)
            return True
        changed = [k for k, b in enumerate(self.blocks) if b.first <= len(old) - suffix and b.last > prefix]
        if changed and (changed[0], changed[-1]) != (i, j) and not any(b.broken for b in self.blocks[i:j + 1]) \
                and not _continues_below(lines, self.blocks[changed[0]].first - 1) \
                and self._reparse(lines, changed[0], changed[-1], delta, alone=True):
            return True  # the edited lines' own blocks parse on their own: their neighbours stand as they were
        parsed = self._reparse(lines, i, j, delta)
        if parsed is None:
            # the region keeps its last good tree; `update` then asks CPython where the error is, and
            # parses the file whole if it has none (the edit changed where blocks begin or end)
            self._splice(i, j, [b.stale(self.blocks[i].first, self.blocks[j].last + delta)
                                for b in self.blocks[i:j + 1]], delta)
        return parsed is not False

    def _reparse(self, lines: list[str], i: int, j: int, delta: int, alone: bool = False) -> bool | None:
        """Parse the lines of blocks `i`..`j` (shifted by `delta` at their end) into blocks in their
        place: True; None if they do not parse, False if they parse into statements CPython and
        libcst do not agree on, or only libcst parses them (or, `alone`, into none: their lines
        need a block to hold them).

        Lines that parse on their own, beginning at the margin, are statements of their own in the
        whole text too, unless the line above them continues into them (a backslash): what else
        could join them to a neighbour (an open bracket or string, a line continuation, an indented
        line, a clause such as `else:`, a decorator) does not parse alone.
        """
        first, last = self.blocks[i].first, self.blocks[j].last + delta
        region = _text(lines, first, last)
        try:
            tree = python_ast(region)  # first: it refuses a half-typed line ten times faster
        except (SyntaxError, RecursionError, ValueError, MemoryError):
            return None if alone or not _parses(region) else False  # libcst's newer syntax: parsed whole
        try:
            module = parse_module(region)
        except (cst.ParserSyntaxError, RecursionError, ValueError, MemoryError):
            return None
        blocks = _blocks(list(module.body), tree.body, first, last, first - 1, module.default_indent, "",
                         members=True)
        if blocks is None or (not blocks and (alone or len(self.blocks) == j - i + 1)):
            return False
        if not blocks:  # only blank lines and comments are left: the block above (or below) owns them
            if i > 0:
                i -= 1
                blocks = [replace(self.blocks[i], last=last)]
            else:
                j += 1
                blocks = [replace(self.blocks[j].moved(delta), first=first)]
        self.replaced = [b.node for b in self.blocks[i:j + 1] if all(b.node is not n.node for n in blocks)]
        self._splice(i, j, blocks, delta)
        return True

    @staticmethod
    def _parse_members(members: tuple[Block, ...], lines: list[str], first: int, last: int) -> list[Block] | None:
        """The class members of lines `first`..`last`, or None if they do not parse as members."""
        region = _text(lines, first, last)
        try:
            module = parse_module(_STAND_IN + region)
            tree = python_ast(_STAND_IN + region)
        except (cst.ParserSyntaxError, SyntaxError, RecursionError, ValueError, MemoryError):
            return None
        if len(module.body) != 1 or not isinstance(stand_in := module.body[0], cst.ClassDef) \
                or not isinstance(stand_in.body, cst.IndentedBlock) or len(tree.body) != 1 \
                or not isinstance(tree.body[0], ast.ClassDef):
            return None
        indent = stand_in.body.indent if stand_in.body.indent is not None else module.default_indent
        if indent != members[0].indent:
            return None  # the region moved in or out of the class: its structure changed
        return _blocks(list(stand_in.body.body), tree.body[0].body, first, last, first - 2, module.default_indent,
                       indent, members=False)

    def _splice(self, i: int, j: int, blocks: list[Block], delta: int) -> None:
        self.blocks = [*self.blocks[:i], *blocks, *(b.moved(delta) for b in self.blocks[j + 1:])]
        for block in blocks:  # where the user types: the new nodes findings name are likely there
            for statement in (block.node, *(m.node for m in block.members)):
                self._recent.pop(statement, None)
                self._recent[statement] = None
        for old in list(self._recent)[:-_RECENT]:
            del self._recent[old]
        assert self.module is not None
        if self.replaced:  # else the same statements stand (a region that stopped parsing keeps its tree)
            self.module = self.module.with_changes(body=[b.node for b in self.blocks])

    # ---- documents and positions --------------------------------------------------------

    def _document(self, text: str) -> Document:
        if self._unsplit is not None:
            return Document(self.filename, text, module=self.module, locator=self.span)
        if self.module is None or not self.blocks:
            return Document(self.filename, text, module=self.module, syntax_problem=self._problem)
        lines = len(self.lines) - (self.lines[-1] == "")  # split at \n: a final line end leaves ""
        stale = tuple(sorted({(b.first, min(b.last, lines)) for b in self._where.values() if b.broken}))
        return Document(self.filename, text, module=self.module, syntax_problem=self._problem if stale else None,
                        stale_lines=stale, locator=self.span)

    def span(self, node: cst.CSTNode, scope: cst.CSTNode | None = None,
             likely: frozenset[cst.CSTNode] = frozenset()) -> Span:
        """The range of `node` in the current version (KeyError for a node of no block).

        Blocks are resolved on demand: first the block of `scope` (the function `node` is likely
        in), then those of `likely` (the caller's guess: the functions whose analysis reported
        something), then those the last edits re-parsed, then, if the node is still not found,
        all the others, nearest the edits first (without a `scope`, the module-level code's before
        the functions and classes).
        """
        self.split()
        if self._whole is not None:
            return self._whole.span(node)
        if node not in self._owner:
            first = self._where.get(scope) if scope is not None else None
            if first is not None and first.node not in self._positions:
                self._resolve(first)
        if node not in self._owner:
            edited = max((b.first for b in self._where.values() if b.node in self._recent), default=0)
            for block in sorted(self._where.values(), key=lambda b: (
                    b.node not in likely, b.node not in self._recent,
                    scope is None and isinstance(b.node, (cst.FunctionDef, cst.ClassDef)), abs(b.first - edited))):
                if block.node not in self._positions:
                    self._resolve(block)
                    if node in self._owner:
                        break
        block = self._where[self._owner[node]]
        if block.broken:  # a stale tree: its findings are dropped, this keeps them in its lines
            return Span(Position(block.first, 0), Position(block.first, 0))
        relative = self._positions[block.node][node]
        return Span(Position(block.start + relative.start.line, relative.start.column),
                    Position(block.start + relative.end.line, relative.end.column))

    def source_of(self, node: cst.CSTNode) -> str | None:
        """The text of the top-level statement `node` in the current version (its lines), None for
        another node or one standing in for lines that no longer parse."""
        block = self._where.get(node)
        if block is None or block.broken or block.indent:
            return None
        return "\n".join(self.lines[block.first - 1:block.last])

    def name_at(self, line: int, column: int) -> cst.Name | None:
        """The name at (1-based `line`, 0-based `column`) in the current version, if any."""
        self.split()
        for block in self._where.values():
            if block.members or block.broken or not block.first <= line <= block.last:
                continue
            if block.node not in self._positions:
                self._resolve(block)
            relative = line - block.start
            for node, code_range in self._positions[block.node].items():
                if isinstance(node, cst.Name) and code_range.start.line == relative == code_range.end.line \
                        and code_range.start.column <= column <= code_range.end.column:
                    return node
        return None

    def _resolve(self, block: Block) -> None:
        """Positions of every node of `block`, relative to the block's own start line."""
        node = block.node
        if block.members:  # its members resolve themselves; here only the class's header
            node = node.with_changes(body=cst.IndentedBlock(body=[cst.SimpleStatementLine([cst.Pass()])]))
        if block.indent:
            wrapped = cst.Module(body=[cst.ClassDef(name=cst.Name("_"), body=cst.IndentedBlock(
                body=[node], indent=None if block.indent == block.default_indent else block.indent))],
                default_indent=block.default_indent)
        else:
            wrapped = cst.Module(body=[node], default_indent=block.default_indent)
        relative = self._positions[block.node] = spans_of(wrapped, anchor=node, skip=node if block.members else None)
        for inner in relative:
            self._owner[inner] = block.node
