"""Whether an edit deletes the user's code: a name, an attribute name or a number it replaces and does not put back.

An editor applies a preferred fix without asking (VS Code's Auto Fix and fix on
save, Neovim's ``code_action({apply = true})``), so fixlore marks preferred only
a fix it can vouch for. A fix that keeps every word and number of the code it
replaces (``x == None`` -> ``x is None``, a quote style, a sorted import
block) is safe to apply unasked; one that deletes some (``super(Cls, self)``
-> ``super()``, ``getattr(obj, "name")`` -> ``obj.name``, an unused import)
may be right, but only the user can say it is what they want
(:mod:`fixlore.lsp.actions.assemble` asks their habit).

Pure and cheap: it reads the replaced regions only, never parses the file.
String contents are not code (a quote style or a prefix may change them
freely), but the fields of an f-string or a template literal are: a name moved
into ``f"{x}"`` is kept.
"""

from __future__ import annotations

import keyword
import re
from collections import Counter
from collections.abc import Iterable

_TOKENS = re.compile(
    r"""(?P<str>(?<![\w$])(?P<prefix>[rRbBuUfFtT]{0,3})(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\[\s\S])*`))"""
    r"""|(?P<word>[^\W\d][\w$]*|\$[\w$]*)"""
    r"""|(?P<num>(?<![\w.])\d[\w.]*)"""
)
_PREFIX = re.compile(r"[rRbBuUfFtT]{1,3}")
"""A string's prefix, when a region ends right before the quote (ruff's UP025 edit deletes the ``u`` alone)."""
_CONVERSION = re.compile(r"![rsa](?=[:}])")

_NOT_NAMES = frozenset([*keyword.kwlist, *keyword.softkwlist]) - {"None", "True", "False"} | {
    # JavaScript/TypeScript words a fix may swap without touching the user's names
    "var", "let", "const", "function", "new", "typeof", "instanceof", "void", "delete", "this",
    "switch", "case", "default", "throw", "catch", "finally", "do", "of", "extends", "export",
    "readonly", "declare", "interface", "type", "enum", "implements", "public", "private", "protected",
    "static", "abstract", "any", "unknown", "never", "undefined",
}  # fmt: skip


def words_and_numbers(text: str) -> Counter[str]:
    """The names, attribute names and numbers of a piece of code (keywords and string contents aside)."""
    out: Counter[str] = Counter()
    for m in _TOKENS.finditer(text):
        if m.group("str") is not None:
            quoted = m.group("str")
            prefix = m.group("prefix").lower()
            if "f" in prefix or "t" in prefix or quoted.endswith("`"):
                out.update(words_and_numbers(_fields(quoted)))
            continue
        word = m.group("word")
        if word is not None:
            prefix = text[m.end() : m.end() + 1] in ("'", '"') and _PREFIX.fullmatch(word) is not None
            if word not in _NOT_NAMES and word != "$" and not prefix:
                out["w:" + word] += 1
            continue
        out["n:" + m.group("num")] += 1
    return out


def _fields(quoted: str) -> str:
    """The code in an f-string's or a template literal's replacement fields (``{x}``, ``${x}``), nested ones too."""
    text = _CONVERSION.sub("", quoted.replace("{{", "").replace("}}", ""))
    out: list[str] = []
    depth = 0
    for ch in text:
        if ch == "{":
            depth += 1
            out.append(" ")
        elif ch == "}":
            depth = max(depth - 1, 0)
            out.append(" ")
        elif depth:
            out.append(ch)
    return "".join(out)


def deletes_code(replaced: Iterable[tuple[str, str]]) -> bool:
    """Whether replacing each ``(old, new)`` region loses a name, attribute name or number of ``old``.

    The regions of one fix count together: a name an edit moves to another
    place of the same fix is kept.
    """
    before: Counter[str] = Counter()
    after: Counter[str] = Counter()
    for old, new in replaced:
        before.update(words_and_numbers(old))
        after.update(words_and_numbers(new))
    return any(after[token] < n for token, n in before.items())
