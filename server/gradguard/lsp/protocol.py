"""pygls, adapted where it falls short of the protocol: requests with invalid params get an
answer, and documents split their lines where LSP does."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import TextDocument, Workspace

from gradguard.source.document import lines_of


class AnsweringProtocol(LanguageServerProtocol):
    """pygls 2 drops a request whose params do not validate, leaving the client waiting forever:
    this answers it with the JSON-RPC error instead."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if not (isinstance(data, dict) and "id" in data and "method" in data):
                raise
            self._send_response(data["id"], error=lsp.ResponseError(
                code=error.code, message=f"{data['method']}: the request's params are not valid LSP"))
            return SimpleNamespace(jsonrpc="answered")  # handle_message skips it


class LspTextDocument(TextDocument):
    """A document whose lines end where LSP (and Python) end them: not at form feeds."""

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(lines_of(self.source))


class LspWorkspace(Workspace):
    """pygls' workspace, holding `LspTextDocument`s."""

    def _create_text_document(self, doc_uri: str, source: str | None = None, version: int | None = None,
                              language_id: str | None = None) -> TextDocument:
        return LspTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                               sync_kind=self._sync_kind, position_codec=self._position_codec)
