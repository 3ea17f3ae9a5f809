"""Findings ↔ LSP types: ranges in the client's position encoding, severities, actions."""

from __future__ import annotations

from typing import Callable

from lsprotocol import types as lsp
from pygls.uris import from_fs_path
from pygls.workspace import TextDocument

from gradguard.findings import Applicability, Finding, Fix, Severity, Span
from gradguard.rules import RULES_BY_CODE

SOURCE = "gradguard"
_SEVERITIES = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFO: lsp.DiagnosticSeverity.Information,
}


def to_range(document: TextDocument, span: Span) -> lsp.Range:
    """A code-point span (1-based lines) as an LSP range in the negotiated encoding."""
    server_range = lsp.Range(lsp.Position(span.start.line - 1, span.start.column),
                             lsp.Position(span.end.line - 1, span.end.column))
    return document.range_to_client_units(server_range)


Placer = Callable[[Span], "tuple[TextDocument, Span] | None"]  # a notebook's cell-local span → its cell's document


def to_diagnostic(document: TextDocument, finding: Finding, index: int, related: bool,
                  version: int | None = None, place: Placer | None = None) -> lsp.Diagnostic:
    """`finding` in `document`; `version`: the analysed version (a notebook's, for a cell);
    `place`: where a related span of a notebook lies (the cell it names)."""
    rule = RULES_BY_CODE.get(finding.code)
    return lsp.Diagnostic(
        range=to_range(document, finding.span),
        message=finding.message,
        severity=_SEVERITIES[finding.severity],
        code=finding.code,
        code_description=lsp.CodeDescription(href=rule.url) if rule is not None else None,
        source=SOURCE,
        related_information=[
            lsp.DiagnosticRelatedInformation(location=_location(document, r.filename, r.span, place), message=r.message)
            for r in finding.related] if related else None,
        data={"index": index, "version": document.version if version is None else version},
    )


def _location(document: TextDocument, filename: str, span: Span, place: Placer | None) -> lsp.Location:
    if span.cell is not None and place is not None and (found := place(span)) is not None:
        return lsp.Location(uri=found[0].uri, range=to_range(*found))
    return lsp.Location(uri=_uri(filename, document), range=to_range(document, span)
                        if filename == document.path else _plain_range(span))


def to_workspace_edit(document: TextDocument, fix: Fix, versioned: bool,
                      place: Placer | None = None) -> lsp.WorkspaceEdit | None:
    """`fix`'s edits, in `document` or (`place`) in the notebook cells they name; None when one
    names a cell that is gone."""
    by_document: dict[str, tuple[TextDocument, list[lsp.TextEdit]]] = {}
    for edit in fix.edits:
        found = (document, edit.span) if edit.span.cell is None or place is None else place(edit.span)
        if found is None:
            return None
        target, span = found
        by_document.setdefault(target.uri, (target, []))[1].append(
            lsp.TextEdit(range=to_range(target, span), new_text=edit.content))
    if versioned:
        return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(
            text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=target.uri, version=target.version),
            edits=edits) for target, edits in by_document.values()])
    return lsp.WorkspaceEdit(changes={uri: edits for uri, (_, edits) in by_document.items()})


def to_code_action(document: TextDocument, fix: Fix, diagnostic: lsp.Diagnostic, preferred: bool,
                   versioned: bool, place: Placer | None = None) -> lsp.CodeAction | None:
    suffix = "" if fix.applicability is Applicability.SAFE else " (unsafe)"
    edit = to_workspace_edit(document, fix, versioned, place)
    if edit is None:
        return None
    return lsp.CodeAction(title=f"gradguard: {fix.message}{suffix}", kind=lsp.CodeActionKind.QuickFix,
                          diagnostics=[diagnostic], is_preferred=preferred, edit=edit)


def _plain_range(span: Span) -> lsp.Range:
    return lsp.Range(lsp.Position(span.start.line - 1, span.start.column),
                     lsp.Position(span.end.line - 1, span.end.column))


def _uri(filename: str, document: TextDocument) -> str:
    if filename == document.path:
        return document.uri
    return from_fs_path(filename) or document.uri
