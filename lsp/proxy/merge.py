"""Merging upstream answers, and remembering which upstream made an item.

Items that the editor may send back for resolving (code actions, completion
items, code lenses, inlay hints, document links, workspace symbols) get their
``data`` wrapped as ``{"fixlore": {"upstream": id}, "data": original}``;
:func:`unwrap` restores the item exactly as the upstream made it (no ``data``
key if it had none) and says where it came from. Everything else in an item
passes untouched.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_TAG = "fixlore"

# request -> the resolve request that may follow for its items
RESOLVABLE = {
    "textDocument/codeAction": "codeAction/resolve",
    "textDocument/completion": "completionItem/resolve",
    "textDocument/codeLens": "codeLens/resolve",
    "textDocument/inlayHint": "inlayHint/resolve",
    "textDocument/documentLink": "documentLink/resolve",
    "workspace/symbol": "workspaceSymbol/resolve",
}
RESOLVE_METHODS = frozenset(RESOLVABLE.values())

LOCATION_METHODS = frozenset(
    {
        "textDocument/definition",
        "textDocument/declaration",
        "textDocument/typeDefinition",
        "textDocument/implementation",
        "textDocument/references",
    }
)
LIST_METHODS = frozenset({"workspace/symbol"}) | LOCATION_METHODS
"""Requests whose answers from several upstreams are concatenated."""

_COMPLETION_DEFAULTS = ("commitCharacters", "insertTextFormat", "insertTextMode", "data")


def wrap_item(item: Any, upstream: str) -> Any:
    """Record ``upstream`` in an item's ``data`` (a copy of the item's top level)."""
    if not isinstance(item, dict) or isinstance(item.get("command"), str):
        return item  # a bare Command (title, command, arguments): nothing to resolve
    out = dict(item)
    tag: dict[str, Any] = {_TAG: {"upstream": upstream}}
    if "data" in item:
        tag["data"] = item["data"]
    out["data"] = tag
    return out


def origin(item: Any) -> str | None:
    """The upstream that made a wrapped item, or ``None``."""
    data = item.get("data") if isinstance(item, dict) else None
    if isinstance(data, dict) and isinstance(data.get(_TAG), dict):
        upstream = data[_TAG].get("upstream")
        return upstream if isinstance(upstream, str) else None
    return None


def unwrap(item: Any) -> tuple[str | None, Any]:
    """(origin, the item as its upstream made it)."""
    source = origin(item)
    if source is None:
        return None, item
    out = dict(item)
    data = item["data"]
    if "data" in data:
        out["data"] = data["data"]
    else:
        del out["data"]
    return source, out


def wrap_result(method: str, result: Any, upstream: str) -> Any:
    """Wrap the items of a resolvable request's result."""
    if isinstance(result, list):
        return [wrap_item(item, upstream) for item in result]
    if method == "textDocument/completion" and isinstance(result, dict) and isinstance(result.get("items"), list):
        out = dict(result)
        items = result["items"]
        defaults = result.get("itemDefaults")
        if isinstance(defaults, dict) and "data" in defaults:
            # item data defaults to the list's; wrap the effective value
            items = [item if "data" in item else {**item, "data": defaults["data"]} for item in items]
            out["itemDefaults"] = {k: v for k, v in defaults.items() if k != "data"}
        out["items"] = [wrap_item(item, upstream) for item in items]
        return out
    return result


def merge_lists(results: Iterable[Any]) -> Any:
    """Concatenate list answers (locations, symbols); a lone answer passes as is."""
    present = [r for r in results if r is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    lists = [r if isinstance(r, list) else [r] for r in present]
    if any(_is_link(x) for lst in lists for x in lst) and any(_is_location(x) for lst in lists for x in lst):
        lists = [[_as_link(x) for x in lst] for lst in lists]
    return [x for lst in lists for x in lst]


def _is_link(x: Any) -> bool:
    return isinstance(x, dict) and "targetUri" in x


def _is_location(x: Any) -> bool:
    return isinstance(x, dict) and "uri" in x and "range" in x


def _as_link(x: Any) -> Any:
    if not _is_location(x):
        return x
    return {"targetUri": x["uri"], "targetRange": x["range"], "targetSelectionRange": x["range"]}


def merge_completions(results: Iterable[Any]) -> Any:
    """One completion answer from several: items concatenated, defaults applied."""
    present = [r for r in results if r is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    items: list[Any] = []
    incomplete = False
    for result in present:
        if isinstance(result, list):
            items.extend(result)
            continue
        if not isinstance(result, dict):
            continue
        incomplete = incomplete or bool(result.get("isIncomplete"))
        defaults = result.get("itemDefaults")
        for item in result.get("items") or []:
            items.append(_apply_defaults(item, defaults) if isinstance(defaults, dict) else item)
    return {"isIncomplete": incomplete, "items": items}


def _apply_defaults(item: Any, defaults: dict[str, Any]) -> Any:
    if not isinstance(item, dict):
        return item
    out = dict(item)
    for key in _COMPLETION_DEFAULTS:
        if key in defaults and key not in out:
            out[key] = defaults[key]
    edit_range = defaults.get("editRange")
    if edit_range is not None and "textEdit" not in out:
        text = out.get("textEditText", out.get("label", ""))
        if isinstance(edit_range, dict) and "insert" in edit_range:
            out["textEdit"] = {"newText": text, "insert": edit_range["insert"], "replace": edit_range["replace"]}
        else:
            out["textEdit"] = {"newText": text, "range": edit_range}
    return out
