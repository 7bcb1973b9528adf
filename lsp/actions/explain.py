"""Why the code actions of a diagnostic ranked as they did: the ``fixlore.explain`` command.

``explain_at(actions, hub, learning, proxy, uri, position)`` builds the
code-action answer for each diagnostic at a position exactly as a request
would (without counting it as seen by the user) and returns, per action, its
score, whether it is preferred and the ranker's explanation (numbers and
factor names only). The terminal's ``fixlore explain`` is
:mod:`fixlore.lsp.tools.explain_cli`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fixlore.lsp.actions.code_actions import AUTOMATIC
from fixlore.lsp.actions.tokens import Tokens

if TYPE_CHECKING:
    from fixlore.lsp.actions.code_actions import CodeActions
    from fixlore.lsp.hub import DiagnosticsHub
    from fixlore.lsp.learning.loop import LearningLoop
    from fixlore.lsp.proxy.core import Proxy


def _covers(diag: dict[str, Any], line: int, character: int | None) -> bool:
    rng = diag.get("range") or {}
    start, end = rng.get("start") or {}, rng.get("end") or {}
    s_line, e_line = int(start.get("line", -1)), int(end.get("line", -1))
    if not s_line <= line <= e_line:
        return False
    if character is None:
        return True
    if line == s_line and character < int(start.get("character", 0)):
        return False
    return not (line == e_line and character > int(end.get("character", 0)))


async def explain_at(
    actions: CodeActions,
    hub: DiagnosticsHub,
    learning: LearningLoop,
    proxy: Proxy,
    uri: str,
    position: dict[str, Any],
) -> dict[str, Any]:
    """The ranking of every diagnostic's actions at ``position`` (``character`` optional)."""
    line = int(position.get("line", 0))
    character = position.get("character")
    await learning.store.ready()  # the evidence is the point: wait for the store if it is still opening
    proxy.diagnostics.settle(uri)
    found = [d for d in hub.current(uri) if _covers(d, line, None if character is None else int(character))]
    out: list[dict[str, Any]] = []
    for diag in found:
        raw = {
            "textDocument": {"uri": uri},
            "range": diag["range"],
            "context": {"diagnostics": [diag], "triggerKind": AUTOMATIC},
        }
        assembly = await actions.build(raw, Tokens(), count=False)
        entry: dict[str, Any] = {
            "message": diag.get("message", ""),
            "source": diag.get("source", ""),
            "code": diag.get("code"),
            "range": diag.get("range"),
            "evidence": False,
            "actions": [],
        }
        for group in assembly.groups:
            entry["evidence"] = group.evidence
            for ranked in group.ranked if group.evidence else sorted(group.ranked, key=_upstream_index):
                entry["actions"].append(
                    {
                        "title": group.titles.get(ranked.candidate.upstream_index, "?"),
                        "score": round(ranked.score, 4),
                        "preferred": ranked.preferred and group.evidence,
                        "explanation": list(ranked.explanation)
                        + ([] if group.evidence else ["no evidence for any action: upstream order kept"]),
                    }
                )
        out.append(entry)
    return {"diagnostics": out}


def _upstream_index(ranked: Any) -> int:
    return int(ranked.candidate.upstream_index)


def format_explanation(result: dict[str, Any], label: str) -> str:
    """The human-readable form the CLI prints."""
    lines: list[str] = []
    if not result.get("diagnostics"):
        return f"{label}: no diagnostic here"
    for diag in result["diagnostics"]:
        start = (diag.get("range") or {}).get("start") or {}
        code = f" {diag['code']}" if diag.get("code") else ""
        lines.append(
            f"{label}:{start.get('line', 0) + 1}:{start.get('character', 0) + 1}"
            f" {diag.get('source', '')}{code} {diag.get('message', '').splitlines()[0] if diag.get('message') else ''}"
        )
        if not diag["actions"]:
            lines.append("  (no code actions)")
        for n, action in enumerate(diag["actions"], 1):
            mark = "  [preferred]" if action["preferred"] else ""
            lines.append(f"  {n}. {action['title']}  score {action['score']:.3f}{mark}")
            for why in action["explanation"]:
                lines.append(f"       {why}")
    return "\n".join(lines)
