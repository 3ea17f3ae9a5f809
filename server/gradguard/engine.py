"""From text to findings: parse, interpret, run the rules, apply settings and `# noqa`."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Callable

import libcst as cst

from gradguard.analysis import budget
from gradguard.analysis.budget import Budget, Cancelled
from gradguard.analysis.events import ScopeResult, Seen
from gradguard.analysis.interpreter import interpret, read_top_level
from gradguard.analysis.libraries import Environment
from gradguard.analysis.reuse import read_ahead
from gradguard.analysis.project import ProjectIndex
from gradguard.config import Settings
from gradguard.findings import Edit, Finding, Position, Severity
from gradguard.fixes.apply import FixedText, fix_text
from gradguard.fixes.edits import apply_edits
from gradguard.fixes.noqa import file_exempt, suppressed
from gradguard.rules import RULES, RuleContext
from gradguard.rules.base import NotReported
from gradguard.rules.gg003_multi_output_view_modified import mark_refused_nearby
from gradguard.rules.raised_first import mark_raised_first, reached_later
from gradguard.source.blocks import BlockTree
from gradguard.source.document import Document, too_large
from gradguard.source.syntax import SyntaxProblem
from gradguard.source.files import NotANotebook
from gradguard.source.notebook import Notebook, notebook_json
from gradguard.source.parser import SKIPPED, Unwanted, collector_paused, stops_when

_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
PREPARED_CHECKPOINTS = 4  # spread over an open document's module-level code once it is open (`OpenDocument.prepare`)


def project_index(*, use_jedi: bool = True, capacity: int = 128, python: str | None = None) -> ProjectIndex:
    """A project index whose files' top levels this engine's interpreter reads; installed libraries
    are those of the interpreter `python` (default: $GRADGUARD_PYTHON, else this one)."""
    return ProjectIndex(read_top_level, capacity, use_jedi, Environment(python))


def analyse_document(document: Document, settings: Settings, project: ProjectIndex | None = None,
                     cancelled: Callable[[], bool] | None = None) -> list[Finding]:
    """Every finding of the enabled rules in `document`, sorted by position, within the budget
    of one file (`analysis/budget.py`; `cancelled()` answering True raises `Cancelled`).

    `project` resolves names imported from other files of the project (one per run or server).
    """
    with collector_paused(), budget.using(Budget(cancelled=cancelled, spent=document.parse_seconds)):
        document, result = _interpret(document, project)
        if document.module is not None and document.locator is None and result is not None and \
                (result.changes or result.cuts):
            document = _located_by_block(document, result)
        return _findings(document, settings, project, result)


def analyse_with_values(document: Document, settings: Settings, project: ProjectIndex | None = None
                        ) -> tuple[Document, ScopeResult | None, list[Finding]]:
    """`analyse_document` keeping, as the editor's hovers do, what each name held (`ScopeResult.seen`):
    the document as analysed (positions over the whole file), the interpreter's result, the findings."""
    with collector_paused(), budget.using(Budget(spent=document.parse_seconds)):
        document, result = _interpret(document, project, hovers=True)
        return document, result, _findings(document, settings, project, result)


def silenced(document: Document, settings: Settings, code: str, line: int) -> NotReported | None:
    """Why a finding of `code` at `line` that its rule reports is not shown (None: it is)."""
    if not settings.enabled(code, document.filename):
        return NotReported.NOT_SELECTED
    if suppressed(document.line_text(line), code):
        return NotReported.NOQA
    if file_exempt(document.text, code):
        return NotReported.FILE_NOQA
    return None


def _located_by_block(document: Document, result: ScopeResult) -> Document:
    """`document` placing its nodes block by block (`BlockTree`): only the top-level statements
    that hold a finding or a note pay for libcst's position pass, not the whole file."""
    blocks = BlockTree(document.filename)
    return _looking_first(blocks.update(document.text, document.module), blocks, result)


def _looking_first(document: Document, blocks: BlockTree, result: ScopeResult) -> Document:
    """`document` placing its nodes with `blocks`, looking first in the functions whose analysis
    reported a change, and in those they entered."""
    reporting = {function: unit for function, unit in result.units.items() if unit.changes}
    likely = frozenset(reporting).union(*(unit.entered for unit in reporting.values()))
    return replace(document, locator=partial(blocks.span, likely=likely))


class OpenDocument:
    """A document an editor keeps open, analysed version after version: an edit re-parses only
    the blocks it touched and re-interprets only the functions whose input changed."""

    def __init__(self, filename: str) -> None:
        self.blocks = BlockTree(filename)
        self._previous: ScopeResult | None = None
        self._document: Document | None = None  # the last analysed version
        self._seen: tuple[int, int] = (0, 0)  # (the project, the tick of its files) the previous result saw
        self._replaced: list[cst.CSTNode] = []  # what the versions whose analysis was cancelled replaced
        self._interrupted = False  # the last analysis was cancelled: the next one interprets, whatever changed

    def describe_value(self, line: int, column: int, project: ProjectIndex,
                       describe: Callable[[RuleContext, cst.Name, dict[cst.Name, Seen]], str | None]) -> str | None:
        """`describe` of the value the name at (1-based `line`, 0-based `column`) holds there, with
        what the other names of its function held, if the last analysed version has it."""
        if self._previous is None or self._document is None:
            return None
        name = self.blocks.name_at(line, column)
        scope = self._previous.seen_in(name) if name is not None else None
        if scope is None:
            return None
        return describe(RuleContext(self._document, self._previous.changes, project), name, scope)

    def prepare(self, project: ProjectIndex, cancelled: Callable[[], bool] | None = None) -> None:
        """What the first keystroke would otherwise pay for, done while the user reads the first
        diagnostics: the document split into blocks, what each top-level statement reads, and
        checkpoints of its module-level code spread over it (the same findings, from a run that
        takes them). `cancelled()` answering True (a keystroke) stops it, keeping what was."""
        self.blocks.split()
        previous, document = self._previous, self._document
        if previous is None or document is None or document.module is None or self.blocks.module is None:
            return
        read_ahead(previous.facts, self.blocks.module.body, self.blocks.source_of)
        count = len(document.module.body)
        if previous.checkpoints or previous.cut_short or count < PREPARED_CHECKPOINTS * 2:
            return
        marks = frozenset(count * k // (PREPARED_CHECKPOINTS + 1) for k in range(1, PREPARED_CHECKPOINTS + 1))
        with collector_paused(), budget.using(Budget(cancelled=cancelled)):
            try:
                _, result = _interpret(document, project, hovers=True, source=self.blocks.source_of,
                                       checkpoints_at=marks)
            except Cancelled:
                return
        if result is not None and not result.cut_short:
            result.facts = previous.facts
            self._previous = result

    def forget(self) -> None:
        """Interpret the next version afresh (what it imports has changed)."""
        self._previous = None

    def analyse(self, text: str, settings: Settings, project: ProjectIndex,
                cancelled: Callable[[], bool] | None = None) -> list[Finding]:
        """The findings for this version's `text`, within one file's budget (an analysis frees
        little of what it builds: the garbage collector waits until it ends). When `cancelled()`
        answers True, `Cancelled` is raised and the next version is analysed as if this one
        never came (what it changed is remembered)."""
        with collector_paused(), budget.using(Budget(cancelled=cancelled)), stops_when(cancelled):
            try:
                return self._analyse(text, settings, project)
            except (Cancelled, Unwanted) as stopped:
                self._replaced.extend(self.blocks.replaced)
                self._interrupted = True
                if isinstance(stopped, Unwanted):
                    raise Cancelled() from None
                raise

    def _analyse(self, text: str, settings: Settings, project: ProjectIndex) -> list[Finding]:
        if (problem := too_large(text)) is not None:  # its blocks are not kept: the next version starts afresh
            self.blocks, self._previous, self._replaced = BlockTree(self.blocks.filename), None, []
            document = self._document = Document(self.blocks.filename, text, syntax_problem=problem)
            return _findings(document, settings, project, None)
        budget.check_wanted()  # a long text's scans and parse are steps of their own
        module = self.blocks.module
        # a file read as an import, or open before, need not be parsed again for its first version
        known = project.parsed(self.blocks.filename, text) if module is None else None
        document = self.blocks.update(text, known)
        budget.check_wanted()
        seen = (id(project), project.dependencies_changed_at(document.filename))
        previous = self._previous if seen == self._seen else None
        if previous is None or document.module is not module or self._interrupted:  # else only positions moved
            replaced = [*self._replaced, *self.blocks.replaced]
            document, self._previous = _interpret(document, project, previous, replaced, hovers=True,
                                                  source=self.blocks.source_of)
            self._replaced, self._interrupted = [], False
        if self._previous is not None and document.locator is not None:
            document = _looking_first(document, self.blocks, self._previous)
        self._document = document
        findings = _findings(document, settings, project, self._previous)
        self._seen = (id(project), project.dependencies_changed_at(document.filename))
        return findings


def _interpret(document: Document, project: ProjectIndex | None, previous: ScopeResult | None = None,
               replaced: list[cst.CSTNode] | None = None, hovers: bool = False,
               source: Callable[[cst.CSTNode], str | None] | None = None,
               checkpoints_at: frozenset[int] = frozenset()) -> tuple[Document, ScopeResult | None]:
    """The interpreter's result for `document` (and the document, marked skipped if too deep)."""
    if document.module is None:
        return document, None
    try:
        parsed_from = document.text if document.syntax_problem is None and not document.stale_lines else None
        result = interpret(document.module, document.filename, project, previous, replaced or (), hovers, source,
                           checkpoints_at, parsed_from)
    except RecursionError:
        return replace(document, module=None, syntax_problem=SyntaxProblem(
            "its expressions are nested too deeply to analyse", Position(1, 0), skipped=True)), None
    if project is not None and result.definitions is not None:
        project.register(document.filename, document.text, result.definitions, result.module_reads)
    return document, result


def _findings(document: Document, settings: Settings, project: ProjectIndex | None,
              result: ScopeResult | None) -> list[Finding]:
    changes, cuts = (result.changes, result.cuts) if result is not None else ([], [])
    mark_refused_nearby(changes)
    context = RuleContext(document, changes, project, cuts,
                          selected=lambda code: settings.enabled(code, document.filename))
    mark_raised_first(changes, document.module, context.selected)
    best: dict[tuple[str, int, int], Finding] = {}
    for rule in RULES:
        if not settings.enabled(rule.code, document.filename):
            continue
        context.reported = tuple(best.values())
        for finding in rule.check(context):
            finding = _with_severity(finding, settings.severity(rule.code, finding.severity))
            key = (finding.code, finding.span.start.line, finding.span.start.column)
            if key not in best or _RANK[finding.severity] < _RANK[best[key].severity]:
                best[key] = finding
    findings = [_without_skipped_text(f) for f in reached_later(context, best.values())
                if silenced(document, settings, f.code, f.span.start.line) is None
                and (f.code == "GG000" or not document.is_stale(f.span.start.line))]
    return sorted(findings, key=lambda f: (f.span.start, f.code))


def fix_document(filename: str, text: str, settings: Settings, project: ProjectIndex | None,
                 unsafe: bool) -> FixedText:
    """`text` with the fixes of its findings applied (`fixes/apply.py`), and what is left."""
    return fix_text(text, lambda current: analyse_document(Document.parse(filename, current), settings, project),
                    unsafe)


def fix_notebook(filename: str, notebook: Notebook, settings: Settings, project: ProjectIndex | None,
                 unsafe: bool) -> tuple[Notebook, FixedText]:
    """`notebook` with the fixes of its findings applied in its cells' sources (its findings and
    the remaining ones in program lines: `Notebook.localised` places them in cells)."""
    current = [notebook]

    def apply(program: str, edits: list[Edit]) -> str:
        by_cell = current[0].edits_by_cell(edits)
        if by_cell is None:  # an edit the cells cannot hold: none of this pass is applied
            return program
        current[0] = current[0].with_sources({number: edited_cell(current[0].cells[number - 1].source, cell_edits)
                                              for number, cell_edits in by_cell.items()})
        return current[0].program

    def analyse(program: str) -> list[Finding]:  # the notebook's program as it is now, its broken cells blank
        return analyse_document(Document.parse(filename, current[0].analysable_program), settings, project)

    fixed = fix_text(notebook.program, analyse, unsafe, apply)
    return current[0], fixed


def notebook_text_findings(filename: str, text: str, settings: Settings) -> list[Finding]:
    """A notebook's JSON open as a text document (an editor that does not sync notebooks): GG000
    saying why it is no notebook; nothing when it is one (its cells are analysed when the editor
    syncs it as a notebook, and by `gradguard check`)."""
    try:
        notebook_json(text)
    except NotANotebook as error:
        return analyse_document(Document.unreadable(filename, error), settings)
    return []


def broken_cells(filename: str, notebook: Notebook, settings: Settings) -> list[Finding]:
    """GG000 for each of the notebook's cells that does not parse, in the cell's lines (the
    other cells are analysed: `Notebook.analysable_program`)."""
    found = []
    for cell, problem in notebook.broken:
        text = cell.program_text
        document = Document(filename, text, syntax_problem=problem, stale_lines=((1, text.count("\n") or 1),))
        found += [replace(f, span=replace(f.span, cell=cell.number)) for f in _findings(document, settings, None, None)]
    return found


def edited_cell(source: str, edits: list[Edit]) -> str:
    """A cell's `source` with `edits` (in its lines) applied; it ends with a newline only if it did."""
    ended = source.endswith("\n") or not source
    text = apply_edits(source if ended else source + "\n", edits)
    return text if ended or not text.endswith("\n") else text[:-1]


def analyse_text(filename: str, text: str, settings: Settings) -> list[Finding]:
    """Parse and analyse one file's text."""
    return analyse_document(Document.parse(filename, text), settings)


def _without_skipped_text(finding: Finding) -> Finding:
    """A fix built from a line whose long chain the parser never saw (`parser.SKIPPED`) would
    write the stand-in into the file: such fixes are dropped."""
    if any(SKIPPED in edit.content for fix in finding.fixes for edit in fix.edits):
        return replace(finding, fixes=tuple(f for f in finding.fixes if not any(SKIPPED in e.content for e in f.edits)))
    return finding


def _with_severity(finding: Finding, severity: Severity) -> Finding:
    return finding if finding.severity is severity else replace(finding, severity=severity)
