"""Capabilities: what fixlore tells its upstreams and what it tells the editor.

* :func:`client_capabilities_for_upstream` — the editor's own client
  capabilities, raw, with ``general.positionEncodings`` narrowed to the one
  encoding the session uses.
* :func:`merge_server_capabilities` — fixlore's initialize result with the
  upstreams' capabilities merged in: the union of what any of them offers
  (trigger characters, code action kinds and command lists are united; an
  options object beats a bare ``true``); fixlore's own text sync and position
  encoding stay, because fixlore is the editor's peer for those. Notebook sync
  is the upstreams' (their notebook selectors united): fixlore forwards
  notebooks to the upstreams that asked for them.
* :func:`capable` — whether an upstream serves a method (statically or through
  a dynamic registration). Methods not in the table (newer protocol features)
  count as served: the upstream answers or errors itself.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

UTF16 = "utf-16"

# LSP request method -> the server capability that announces it.
METHOD_CAPABILITY: dict[str, str] = {
    "textDocument/hover": "hoverProvider",
    "textDocument/completion": "completionProvider",
    "completionItem/resolve": "completionProvider",
    "textDocument/signatureHelp": "signatureHelpProvider",
    "textDocument/declaration": "declarationProvider",
    "textDocument/definition": "definitionProvider",
    "textDocument/typeDefinition": "typeDefinitionProvider",
    "textDocument/implementation": "implementationProvider",
    "textDocument/references": "referencesProvider",
    "textDocument/documentHighlight": "documentHighlightProvider",
    "textDocument/documentSymbol": "documentSymbolProvider",
    "textDocument/codeAction": "codeActionProvider",
    "codeAction/resolve": "codeActionProvider",
    "textDocument/codeLens": "codeLensProvider",
    "codeLens/resolve": "codeLensProvider",
    "textDocument/documentLink": "documentLinkProvider",
    "documentLink/resolve": "documentLinkProvider",
    "textDocument/documentColor": "colorProvider",
    "textDocument/colorPresentation": "colorProvider",
    "textDocument/formatting": "documentFormattingProvider",
    "textDocument/rangeFormatting": "documentRangeFormattingProvider",
    "textDocument/rangesFormatting": "documentRangeFormattingProvider",
    "textDocument/onTypeFormatting": "documentOnTypeFormattingProvider",
    "textDocument/rename": "renameProvider",
    "textDocument/prepareRename": "renameProvider",
    "textDocument/foldingRange": "foldingRangeProvider",
    "textDocument/selectionRange": "selectionRangeProvider",
    "textDocument/prepareCallHierarchy": "callHierarchyProvider",
    "callHierarchy/incomingCalls": "callHierarchyProvider",
    "callHierarchy/outgoingCalls": "callHierarchyProvider",
    "textDocument/prepareTypeHierarchy": "typeHierarchyProvider",
    "typeHierarchy/supertypes": "typeHierarchyProvider",
    "typeHierarchy/subtypes": "typeHierarchyProvider",
    "textDocument/semanticTokens/full": "semanticTokensProvider",
    "textDocument/semanticTokens/full/delta": "semanticTokensProvider",
    "textDocument/semanticTokens/range": "semanticTokensProvider",
    "textDocument/linkedEditingRange": "linkedEditingRangeProvider",
    "textDocument/moniker": "monikerProvider",
    "textDocument/inlayHint": "inlayHintProvider",
    "inlayHint/resolve": "inlayHintProvider",
    "textDocument/inlineValue": "inlineValueProvider",
    "textDocument/inlineCompletion": "inlineCompletionProvider",
    "textDocument/diagnostic": "diagnosticProvider",
    "workspace/diagnostic": "diagnosticProvider",
    "workspace/symbol": "workspaceSymbolProvider",
    "workspaceSymbol/resolve": "workspaceSymbolProvider",
    "workspace/executeCommand": "executeCommandProvider",
    "workspace/willCreateFiles": "workspace",
    "workspace/willRenameFiles": "workspace",
    "workspace/willDeleteFiles": "workspace",
}

# Capabilities that fixlore itself owns towards the editor.
_OURS = frozenset({"positionEncoding", "textDocumentSync", "diagnosticProvider"})
_UNITED_LISTS = frozenset(
    {
        "triggerCharacters",
        "retriggerCharacters",
        "allCommitCharacters",
        "codeActionKinds",
        "commands",
        "moreTriggerCharacter",
        "notebookSelector",
    }
)
_ORED = frozenset({"resolveProvider", "workDoneProgress", "interFileDependencies", "workspaceDiagnostics"})


def client_capabilities_for_upstream(editor_capabilities: Any, encoding: str) -> dict[str, Any]:
    """The editor's capabilities, raw, offering exactly ``encoding``."""
    caps = copy.deepcopy(editor_capabilities) if isinstance(editor_capabilities, dict) else {}
    general = caps.setdefault("general", {})
    if not isinstance(general, dict):
        general = caps["general"] = {}
    general["positionEncodings"] = [encoding]
    return caps


def position_encoding_of(result: Any) -> str:
    """The encoding an upstream chose in its initialize result (UTF-16 if unsaid)."""
    caps = result.get("capabilities") if isinstance(result, dict) else None
    encoding = caps.get("positionEncoding") if isinstance(caps, dict) else None
    return encoding if isinstance(encoding, str) else UTF16


def capable(capabilities: Mapping[str, Any], method: str, dynamic: frozenset[str] | set[str] = frozenset()) -> bool:
    """True if an upstream with these capabilities serves ``method``."""
    if method in dynamic:
        return True
    key = METHOD_CAPABILITY.get(method)
    if key is None:
        return True
    value = capabilities.get(key)
    if method.endswith("/resolve"):
        return isinstance(value, dict) and bool(value.get("resolveProvider"))
    if method == "workspace/diagnostic":
        return isinstance(value, dict) and bool(value.get("workspaceDiagnostics"))
    if method == "textDocument/semanticTokens/full/delta":
        full = value.get("full") if isinstance(value, dict) else None
        return isinstance(full, dict) and bool(full.get("delta"))
    return value is not None and value is not False


def text_sync_of(capabilities: Mapping[str, Any]) -> tuple[int, bool, bool]:
    """(change kind 0/1/2, wants didSave, wants the text in didSave) of an upstream."""
    sync = capabilities.get("textDocumentSync")
    if isinstance(sync, int):
        return sync, False, False
    if not isinstance(sync, dict):
        return 0, False, False
    change = sync.get("change", 0)
    save = sync.get("save")
    include = isinstance(save, dict) and bool(save.get("includeText"))
    return (change if isinstance(change, int) else 0), bool(save), include


def merge_value(ours: Any, theirs: Any) -> Any:
    """Merge one capability value: the union of both."""
    if ours is None or ours is False:
        return copy.deepcopy(theirs)
    if theirs is None or theirs is False:
        return ours
    if isinstance(ours, dict) and isinstance(theirs, dict):
        out = dict(ours)
        for key, value in theirs.items():
            if key in _UNITED_LISTS and isinstance(value, list) and isinstance(out.get(key), list):
                out[key] = out[key] + [v for v in value if v not in out[key]]
            elif key in _ORED:
                out[key] = bool(out.get(key)) or bool(value)
            elif key not in out:
                out[key] = copy.deepcopy(value)
            else:
                out[key] = merge_value(out[key], value)
        return out
    if isinstance(theirs, dict) and ours is True:
        return copy.deepcopy(theirs)
    return ours


def merge_server_capabilities(ours: dict[str, Any], upstreams: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Unite fixlore's own capabilities with every upstream's."""
    merged = dict(ours)
    for caps in upstreams:
        for key, value in caps.items():
            if key in _OURS:
                continue
            merged[key] = merge_value(merged.get(key), value)
    return merged


def serves_notebook(capabilities: Mapping[str, Any], cell_languages: set[str]) -> bool:
    """Whether an upstream syncs notebooks whose cells are in one of ``cell_languages``.

    Its ``notebookSelector`` is read for the cells' languages only; a
    selector's notebook type or URI pattern is not checked.
    """
    sync = capabilities.get("notebookDocumentSync")
    selectors = sync.get("notebookSelector") if isinstance(sync, dict) else None
    if not isinstance(selectors, list):
        return False
    for selector in selectors:
        if not isinstance(selector, dict):
            continue
        cells = selector.get("cells")
        if cells is None or any(isinstance(c, dict) and c.get("language") in cell_languages for c in cells):
            return True
    return False
