"""A Jupyter notebook (nbformat 4) as one Python program, and the way back to its cells.

The code cells, in document order, form one program: the kernel runs them so, one namespace for
all. Lines IPython transforms are masked in the program (`%magic`, `!shell`, `x = !cmd`,
`obj?`): each becomes `pass` at its indentation, so that every other line keeps its number and
columns. A cell that starts with a cell magic is left out unless the magic runs the cell as
Python once (`%%time`, `%%capture`: their first line is masked); `%%timeit` runs it many times,
`%%bash`, `%%writefile` and the like are not Python. Cells in another language (the notebook's
kernel, or VS Code's `metadata.vscode.languageId`) and markdown or raw cells are left out.

Cells are numbered as Ruff numbers them: 1-based, among all the notebook's cells (markdown
included), so `nb.ipynb:cell 3:5:9` is the third cell, its fifth line.

Why plain `json` and not the `nbformat` library: `--fix` must leave every byte outside the edited
cells' sources as it was (outputs, metadata, key order, indentation, escapes, the final newline),
so an edit replaces a cell's `source` value inside the file's own text; that needs where each
value lies in the text, which no JSON library reports (this module finds it with `json`'s own
string scanner). `nbformat` would add only validation against its schema (through `jsonschema`,
tens of milliseconds to import in every editor start) and upgrades from older formats; what
gradguard reads (cells, their type, source and language) is checked here, and a file that is not
an nbformat 4 notebook is reported as unreadable.
"""

from __future__ import annotations

import json
import re
import tokenize
from bisect import bisect_right
from functools import cached_property, lru_cache
from dataclasses import dataclass, replace
from json.decoder import scanstring
from typing import Mapping

from gradguard.findings import Edit, Finding, Position, Related, Span
from gradguard.source.files import NotANotebook
from gradguard.source.syntax import SyntaxProblem, python_syntax_problem

PYTHON_CELL_MAGICS = frozenset({"time", "capture"})  # run the cell's code once, in the user's namespace

_MASKED = re.compile(
    r"[ \t]*(?:%|!(?!=)|\?"  # %magic, !shell (not `!=`), ?help
    r"|[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*[ \t]*=[ \t]*[%!]"  # x = !ls, out = %timeit f()
    r")")
_HELP_SUFFIX = re.compile(r"[^#]*[\w)\]]\?\??[ \t]*$")  # obj?  obj.method??
_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_LINE_MENTION = re.compile(r"\bline (\d+)\b")  # how `RuleContext.where` names a line of this file
_DECODER = json.JSONDecoder()


def split_lines(text: str) -> list[str]:
    """`text` cut after each `\\n`, as nbformat stores a cell's source."""
    return _LINE.findall(text)


@dataclass(frozen=True)
class Cell:
    """One cell: its 1-based number among all cells, kind, source, and whether it is in the program."""

    number: int
    kind: str  # "code", "markdown", "raw"
    source: str
    python: bool  # a code cell in Python, not left out for its cell magic
    masked: frozenset[int] = frozenset()  # its 1-based lines masked in the program
    raw_span: tuple[int, int] | None = None  # where its `source` value lies in the notebook's text
    raw_lines: tuple[tuple[int, int], ...] | None = None  # each element's span, when `source` is a list

    @cached_property
    def program_text(self) -> str:
        """The cell as the program holds it: masked lines as `pass`, ending with a newline."""
        lines = split_lines(self.source)
        for number in self.masked:
            line = lines[number - 1]
            indent = line[:len(line) - len(line.lstrip(" \t"))]
            lines[number - 1] = indent + "pass" + ("\n" if line.endswith("\n") else "")
        text = "".join(lines)
        return text if not text or text.endswith("\n") else text + "\n"

    @cached_property
    def program_lines(self) -> list[str]:
        """`program_text` cut after each newline."""
        return split_lines(self.program_text)


def _masked_lines(source: str) -> frozenset[int]:
    """The lines IPython transforms: those that look like it and start a logical line (not a
    continuation inside brackets, `(a\n % b)`, nor a line of a triple-quoted string)."""
    lines = split_lines(source)
    looks = {number for number, line in enumerate(lines, 1)
             if _MASKED.match(line) or _HELP_SUFFIX.match(line.rstrip("\r\n"))}
    if not looks:
        return frozenset()
    return _StatementStarts(lines, looks).masked()


class _StatementStarts:
    """Python's tokenizer over a cell, fed line by line: a line that looks like IPython's is
    masked (fed as `pass`) when the tokens before it end a statement, outside any bracket."""

    def __init__(self, lines: list[str], looks: set[int]) -> None:
        self.lines, self.looks = lines, looks
        self.fed = 0
        self.depth, self.at_start = 0, True
        self.masked_lines: set[int] = set()

    def readline(self) -> str:
        if self.fed == len(self.lines):
            return ""
        self.fed += 1
        line = self.lines[self.fed - 1]
        if self.fed in self.looks and self.at_start and self.depth == 0:
            self.masked_lines.add(self.fed)
            return "pass" + ("\n" if line.endswith("\n") else "")
        return line

    def masked(self) -> frozenset[int]:
        try:
            for token in tokenize.generate_tokens(self.readline):  # lazily: a line is read once the last is done
                if token.type == tokenize.NEWLINE or (token.type == tokenize.NL and self.depth == 0):
                    self.at_start = True
                elif token.type == tokenize.OP and token.string in "([{":
                    self.depth, self.at_start = self.depth + 1, False
                elif token.type == tokenize.OP and token.string in ")]}":
                    self.depth, self.at_start = max(self.depth - 1, 0), False
                elif token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                    self.at_start = False
        except (tokenize.TokenError, SyntaxError):  # a cell that does not tokenize: every such line is IPython's
            return frozenset(self.looks)
        return frozenset(self.masked_lines)


@lru_cache(maxsize=256)
def cell_syntax_problem(program_text: str) -> SyntaxProblem | None:
    """Where a cell's program text stops parsing (cached: an editor's keystroke changes one cell)."""
    return python_syntax_problem(program_text)


def cell_for(number: int, kind: str, source: str, language: str = "python") -> Cell:
    """A cell of `kind` holding `source` (its lines to mask found, its cell magic judged)."""
    python = kind == "code" and language == "python"
    if python and source.startswith("%%"):
        magic = source[2:].split(None, 1)[0] if source[2:].strip() else ""
        if magic not in PYTHON_CELL_MAGICS:
            return Cell(number, kind, source, False)
        return Cell(number, kind, source, True, _masked_lines(source) | {1})
    return Cell(number, kind, source, python, _masked_lines(source) if python else frozenset())


def notebook_json(text: str) -> dict:
    """`text` read as an nbformat 4 notebook's JSON, its cells and their sources checked (what
    gradguard reads of it); raises `NotANotebook`, saying why it is none."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise NotANotebook(f"not a notebook: its JSON is invalid ({error})") from None
    if not isinstance(data, dict):
        raise NotANotebook(f"not a notebook: its JSON is {_JSON_KINDS[type(data)]}, not an object")
    if "cells" not in data:
        raise NotANotebook('not a notebook: it has no "cells"')
    if not isinstance(data["cells"], list):
        raise NotANotebook('not a notebook: its "cells" is not a list')
    if data.get("nbformat") != 4:
        raise NotANotebook(f"only nbformat 4 notebooks are read, not nbformat {data.get('nbformat')}")
    for number, cell in enumerate(data["cells"], 1):
        if not isinstance(cell, dict):
            raise NotANotebook(f"not a notebook: cell {number} is not an object")
        source = cell.get("source", "")
        if not isinstance(source, str) and not (isinstance(source, list) and all(isinstance(s, str) for s in source)):
            raise NotANotebook(f'not a notebook: the "source" of cell {number} is neither a string nor a list of strings')
    return data


_JSON_KINDS = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean",
               type(None): "null"}


@dataclass(frozen=True)
class Notebook:
    """A notebook's cells, the program they form, and the map between the two."""

    text: str  # the notebook's JSON text ("" for cells an editor holds)
    cells: tuple[Cell, ...]
    indent: str = " "

    @classmethod
    def parse(cls, text: str) -> Notebook:
        """The notebook in `text`; raises `NotANotebook`."""
        data = notebook_json(text)
        language = _kernel_language(data.get("metadata"))
        places = _cell_sources(text)
        cells = []
        for index, raw in enumerate(data["cells"]):
            source = raw.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            metadata = raw.get("metadata")
            vscode = metadata.get("vscode") if isinstance(metadata, dict) else None
            cell_language = vscode.get("languageId", language) if isinstance(vscode, dict) else language
            span, lines = places[index] if index < len(places) else (None, None)
            cells.append(replace(cell_for(index + 1, str(raw.get("cell_type")), source, str(cell_language).lower()),
                                 raw_span=span, raw_lines=lines))
        second_line = text.split("\n", 2)[1] if text.count("\n") >= 2 else ""
        return cls(text, tuple(cells), second_line[:len(second_line) - len(second_line.lstrip(" \t"))] or " ")

    @cached_property
    def program(self) -> str:
        return "".join(cell.program_text for cell in self.cells if cell.python)

    @cached_property
    def broken(self) -> tuple[tuple[Cell, SyntaxProblem], ...]:
        """The Python cells that do not parse on their own, with CPython's error in the cell's
        lines. Each cell is a parse unit, as a kernel compiles it: one that ends inside a bracket
        or a string does not reach into the next."""
        return tuple((cell, problem) for cell in self.cells if cell.python and cell.source
                     for problem in [cell_syntax_problem(cell.program_text)] if problem is not None)

    @cached_property
    def analysable_program(self) -> str:
        """The program with its `broken` cells blank (their lines kept): one half-written cell
        does not hide what the others hold."""
        return self.program_standing_in({})

    def program_standing_in(self, stand_ins: Mapping[int, str]) -> str:
        """The program with each `broken` cell as its stand-in in `stand_ins` (by cell number: a
        text that parses, such as the cell's last version that did), padded with blank lines to
        the cell's length; blank when it has none or a longer one."""
        broken = {cell.number for cell, _ in self.broken}
        if not broken:
            return self.program
        parts = []
        for cell in self.cells:
            if not cell.python:
                continue
            if cell.number not in broken:
                parts.append(cell.program_text)
                continue
            count, stand_in = len(cell.program_lines), stand_ins.get(cell.number, "")
            lines = stand_in.count("\n")
            parts.append(stand_in + "\n" * (count - lines) if lines <= count else "\n" * count)
        return "".join(parts)

    def in_broken_cell(self, line: int) -> bool:
        """Whether the program's 1-based `line` lies in a `broken` cell."""
        found = self.cell_at(line)
        return found is not None and any(cell is found[0] for cell, _ in self.broken)

    @cached_property
    def _starts(self) -> tuple[list[int], list[Cell]]:
        """The program line each Python cell starts at (1-based), and those cells."""
        starts, cells, line = [], [], 1
        for cell in self.cells:
            if cell.python and cell.source:
                starts.append(line)
                cells.append(cell)
                line += len(cell.program_lines)
        return starts, cells

    def units(self) -> list[tuple[int, Cell]]:
        """Each Python cell with code and the program line it starts at: what a kernel compiles
        one at a time."""
        return list(zip(*self._starts))

    def cell_at(self, line: int) -> tuple[Cell, int] | None:
        """The cell holding the program's 1-based `line`, and the line's number in it."""
        starts, cells = self._starts
        index = bisect_right(starts, line) - 1
        if not cells:
            return None
        index = max(index, 0)
        return cells[index], line - starts[index] + 1

    def program_line(self, number: int, line: int) -> int | None:
        """The program's line for cell `number`'s 1-based `line` (None: the cell is not in it)."""
        starts, cells = self._starts
        for start, cell in zip(starts, cells):
            if cell.number == number:
                return start + line - 1
        return None

    def local(self, span: Span) -> Span:
        """`span` (program lines) in its cell's lines: the cell of its start; an end in a later
        cell is cut at the end of the start's cell. A span in a cell already stays as it is."""
        found = self.cell_at(span.start.line) if span.cell is None else None
        if found is None:
            return span
        cell, start_line = found
        offset = span.start.line - start_line
        count = len(cell.program_lines)
        end = span.end if span.end.line - offset <= count else Position(count + offset, len(
            cell.program_lines[-1].rstrip("\r\n")))
        return Span(Position(start_line, span.start.column), Position(end.line - offset, end.column), cell.number)

    def _local_edit(self, edit: Edit) -> Edit | None:
        """`edit` in its cell's lines, or None when it crosses cells or touches a masked line."""
        local = self.local(edit.span)
        cell = self.cells[local.cell - 1] if local.cell is not None else None
        if cell is None:
            return None
        end_line = edit.span.end.line - (edit.span.start.line - local.start.line)
        if edit.span.end.column == 0 and end_line == len(cell.program_lines) + 1:
            local = replace(local, end=Position(end_line, 0))  # up to the end of the cell's last line
        elif local.end.line != end_line:
            return None
        if any(local.start.line <= line <= local.end.line for line in cell.masked):
            return None
        return Edit(local, edit.content)

    def localised(self, finding: Finding, relative: bool = False) -> Finding:
        """`finding` (program lines) placed in cells: its span, its related places in this
        notebook and its fixes' edits; a fix with an edit that crosses cells is dropped.
        `relative`: messages name other cells as earlier or later ones, not by number (an
        editor's client may sync only some cells: their numbers are not the ones the user sees).
        A finding in a cell already (a cell's syntax error) stays as it is."""
        if finding.span.cell is not None:
            return finding
        fixes = []
        for fix in finding.fixes:
            edits = [self._local_edit(edit) for edit in fix.edits]
            if all(edit is not None for edit in edits):
                fixes.append(replace(fix, edits=tuple(edits)))
        span = self.local(finding.span)
        related = tuple(Related(r.filename, self.local(r.span), self.messages_in_cells(r.message, span.cell, relative))
                        if r.filename == finding.filename else r for r in finding.related)
        return replace(finding, span=span, message=self.messages_in_cells(finding.message, span.cell, relative),
                       related=related, fixes=tuple(fixes))

    def messages_in_cells(self, message: str, cell: int | None, relative: bool = False) -> str:
        """`message` naming program lines (`line 14`, as rules write them) in cells:
        `line 3` in `cell`, `cell 2, line 4` in another one (`relative`: `an earlier cell, line 4`)."""
        def named(match: re.Match[str]) -> str:
            found = self.cell_at(int(match.group(1)))
            if found is None:
                return match.group(0)
            if found[0].number == cell:
                return f"line {found[1]}"
            if relative and cell is not None:
                return f"{'an earlier' if found[0].number < cell else 'a later'} cell, line {found[1]}"
            return f"cell {found[0].number}, line {found[1]}"

        return _LINE_MENTION.sub(named, message)

    def traceback_in_cells(self, text: str, filename: str) -> str:
        """A Python traceback of the program (compiled as `filename`) naming cells:
        `File "nb.ipynb", cell 3, line 2`."""
        def named(match: re.Match[str]) -> str:
            found = self.cell_at(int(match.group(1)))
            return match.group(0) if found is None else f"{match.group(0)[:-len(match.group(1)) - 5]}cell {found[0].number}, line {found[1]}"

        return re.sub(rf'File "{re.escape(filename)}", line (\d+)', named, text)

    def edits_by_cell(self, edits: list[Edit]) -> dict[int, list[Edit]] | None:
        """`edits` (program lines) by cell number, in cell lines; None if one cannot be placed."""
        by_cell: dict[int, list[Edit]] = {}
        for edit in edits:
            local = self._local_edit(edit)
            if local is None:
                return None
            by_cell.setdefault(local.span.cell, []).append(local)
        return by_cell

    def with_sources(self, sources: dict[int, str]) -> Notebook:
        """This notebook with the cells numbered in `sources` holding new text: only their
        `source` values change in the JSON text; elements (lines) that did not change keep their
        exact text."""
        text = self.text
        cells = list(self.cells)
        for number in sorted(sources, key=lambda n: -(self.cells[n - 1].raw_span or (0, 0))[0]):
            cell = self.cells[number - 1]
            if cell.raw_span is not None:
                start, end = cell.raw_span
                text = text[:start] + self._encoded(cell, sources[number]) + text[end:]
            cells[number - 1] = cell_for(number, cell.kind, sources[number]) if cell.python else cell
        return Notebook.parse(text) if self.text else replace(self, cells=tuple(cells))

    def _encoded(self, cell: Cell, source: str) -> str:
        ascii_only = self.text.isascii() and "\\u" in self.text
        start, end = cell.raw_span
        if cell.raw_lines is None:
            return json.dumps(source, ensure_ascii=ascii_only)
        kept = {}
        for first, last in cell.raw_lines:
            kept.setdefault(json.loads(self.text[first:last]), self.text[first:last])
        lines = [kept.get(line) or json.dumps(line, ensure_ascii=ascii_only) for line in split_lines(source)]
        if len(cell.raw_lines) >= 2:
            opening = self.text[start + 1:cell.raw_lines[0][0]]
            separator = self.text[cell.raw_lines[0][1]:cell.raw_lines[1][0]]
            closing = self.text[cell.raw_lines[-1][1]:end - 1]
        elif cell.raw_lines:
            opening = self.text[start + 1:cell.raw_lines[0][0]]
            closing = self.text[cell.raw_lines[-1][1]:end - 1]
            separator = "," + opening if "\n" in opening else ", "
        else:
            line_start = self.text.rfind("\n", 0, start) + 1
            key_indent = self.text[line_start:start][:len(self.text[line_start:start]) -
                                                     len(self.text[line_start:start].lstrip(" \t"))]
            opening, separator, closing = "\n" + key_indent + self.indent, ",\n" + key_indent + self.indent, \
                "\n" + key_indent
        if not lines:
            return "[]"
        return "[" + opening + separator.join(lines) + closing + "]"


def _kernel_language(metadata: object) -> str:
    if not isinstance(metadata, dict):
        return "python"
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        value = metadata.get(key)
        if isinstance(value, dict) and isinstance(value.get(field), str):
            return value[field].lower()
    return "python"


def _skip_whitespace(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()


def _value_end(text: str, index: int) -> int:
    """Where the JSON value starting at `index` ends (`json`'s own scanner, in C)."""
    return _DECODER.raw_decode(text, index)[1]


def _items(text: str, index: int) -> list[tuple[str | None, int, int]]:
    """The members (key, start, end) of the object, or elements (None, start, end) of the array, at `index`."""
    closing = "}" if text[index] == "{" else "]"
    items: list[tuple[str | None, int, int]] = []
    index = _skip_whitespace(text, index + 1)
    while text[index] != closing:
        key = None
        if closing == "}":
            key, index = scanstring(text, index + 1)
            index = _skip_whitespace(text, _skip_whitespace(text, index) + 1)  # past the colon
        end = _value_end(text, index)
        items.append((key, index, end))
        index = _skip_whitespace(text, end)
        if text[index] == ",":
            index = _skip_whitespace(text, index + 1)
    return items


def _cell_sources(text: str) -> list[tuple[tuple[int, int] | None, tuple[tuple[int, int], ...] | None]]:
    """For each cell of the (valid JSON) notebook `text`: where its `source` value lies, and its elements."""
    top = _items(text, _skip_whitespace(text, 0))
    cells = [(start, end) for key, start, end in top if key == "cells"][-1:]
    places = []
    for _, start, _ in (_items(text, cells[0][0]) if cells else []):
        sources = [(s, e) for key, s, e in _items(text, start) if key == "source"] if text[start] == "{" else []
        if not sources:
            places.append((None, None))
            continue
        first, last = sources[-1]
        elements = tuple((s, e) for _, s, e in _items(text, first)) if text[first] == "[" else None
        places.append(((first, last), elements))
    return places
