"""Validators of the raw params fixlore's code-action handlers read (no cattrs on the request path).

Each returns why the params are unusable, or ``None`` if they are fine; see
:data:`fixlore.lsp.transport.protocol.RAW_PARAMS`. ``didChange``'s is
:func:`fixlore.lsp.transport.text_sync.check_did_change`.
"""

from __future__ import annotations

from typing import Any

from fixlore.lsp.transport.text_sync import is_range


def check_code_action_params(params: Any) -> str | None:
    """Why raw ``textDocument/codeAction`` params are unusable, or ``None`` if they are fine."""
    if not isinstance(params, dict):
        return "params must be an object"
    document = params.get("textDocument")
    if not isinstance(document, dict) or not isinstance(document.get("uri"), str):
        return "textDocument must be an object with a string uri"
    if not is_range(params.get("range")):
        return "range must be a range"
    context = params.get("context")
    if not isinstance(context, dict) or not isinstance(context.get("diagnostics"), list):
        return "context must be an object with a diagnostics list"
    if not all(isinstance(d, dict) and is_range(d.get("range")) for d in context["diagnostics"]):
        return "each context diagnostic must be an object with a range"
    if context.get("triggerKind") not in (None, 1, 2):
        return "context.triggerKind must be 1 or 2"
    return None


def check_resolve_params(params: Any) -> str | None:
    """Why raw ``codeAction/resolve`` params are unusable, or ``None`` if they are fine."""
    if not isinstance(params, dict) or not isinstance(params.get("title"), str):
        return "params must be a code action with a string title"
    return None


__all__ = ["check_code_action_params", "check_resolve_params"]
