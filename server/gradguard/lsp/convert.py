"""Findings ↔ LSP types: ranges in the client's position encoding, severities, actions."""

from __future__ import annotations

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


def to_diagnostic(document: TextDocument, finding: Finding, index: int, related: bool) -> lsp.Diagnostic:
    rule = RULES_BY_CODE.get(finding.code)
    return lsp.Diagnostic(
        range=to_range(document, finding.span),
        message=finding.message,
        severity=_SEVERITIES[finding.severity],
        code=finding.code,
        code_description=lsp.CodeDescription(href=rule.url) if rule is not None else None,
        source=SOURCE,
        related_information=[
            lsp.DiagnosticRelatedInformation(
                location=lsp.Location(uri=_uri(r.filename, document), range=to_range(document, r.span)
                                      if r.filename == document.path else _plain_range(r.span)),
                message=r.message)
            for r in finding.related] if related else None,
        data={"index": index, "version": document.version},
    )


def to_workspace_edit(document: TextDocument, fix: Fix, versioned: bool) -> lsp.WorkspaceEdit:
    edits = [lsp.TextEdit(range=to_range(document, e.span), new_text=e.content) for e in fix.edits]
    if versioned:
        return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(
            text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=document.uri, version=document.version),
            edits=edits)])
    return lsp.WorkspaceEdit(changes={document.uri: edits})


def to_code_action(document: TextDocument, fix: Fix, diagnostic: lsp.Diagnostic, preferred: bool,
                   versioned: bool) -> lsp.CodeAction:
    suffix = "" if fix.applicability is Applicability.SAFE else " (unsafe)"
    return lsp.CodeAction(title=f"gradguard: {fix.message}{suffix}", kind=lsp.CodeActionKind.QuickFix,
                          diagnostics=[diagnostic], is_preferred=preferred,
                          edit=to_workspace_edit(document, fix, versioned))


def _plain_range(span: Span) -> lsp.Range:
    return lsp.Range(lsp.Position(span.start.line - 1, span.start.column),
                     lsp.Position(span.end.line - 1, span.end.column))


def _uri(filename: str, document: TextDocument) -> str:
    if filename == document.path:
        return document.uri
    return from_fs_path(filename) or document.uri
