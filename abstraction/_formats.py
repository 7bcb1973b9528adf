"""``"…%s…" % args`` -> ``f"…{arg}…"``: one fix learned whatever the operands are.

A shape learned token by token fixes one arity and one operand structure: the
fix of ``"<%s %r>" % (a, b.c)`` says nothing to ``"%s: %d" % (key, n)``. Yet
the user's fix is the same mechanical rewrite every time, learned and applied
as such (:mod:`~fixlore.abstraction._rewrites`). Every operand's
source is carried into the f-string, in order, so none is ever dropped; what
the rewrite cannot express exactly (``%(name)s``, widths, operands with quotes,
backslashes or line breaks, a single operand that may be a tuple) is left alone.
"""

from __future__ import annotations

import ast
import re

_DIRECTIVE = re.compile(r"%(.)")
_CONVERSIONS = {"s": "", "r": "!r", "a": "!a", "d": "", "i": ""}
_PREFIX = re.compile(r"([uUrR]?)(['\"]{3}|['\"])")


def percent_to_fstring(expression: str) -> str | None:
    """The f-string equal to ``expression`` (a ``%`` of a string literal), or ``None`` if unsure."""
    try:
        tree = ast.parse("(" + expression + "\n)", mode="eval")
    except (SyntaxError, ValueError):
        return None
    node = tree.body
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)):
        return None
    left = node.left
    if not (isinstance(left, ast.Constant) and isinstance(left.value, str)):
        return None
    source = "(" + expression + "\n)"
    literal = ast.get_source_segment(source, left)
    prefix = _PREFIX.match(literal or "")
    if literal is None or prefix is None or not literal.endswith(prefix.group(2)):
        return None  # implicit concatenation, or a prefix the rewrite does not keep
    quote = prefix.group(2)
    body = literal[prefix.end() : len(literal) - len(quote)]
    if quote in body:
        return None
    right = node.right
    operands = right.elts if isinstance(right, ast.Tuple) else [right]
    if any(isinstance(o, ast.Starred) for o in operands):
        return None
    if not isinstance(right, ast.Tuple) and _may_be_tuple(right):
        return None
    texts = [_operand(source, o, quote) for o in operands]
    if any(t is None for t in texts):
        return None
    out: list[str] = []
    pos = 0
    used = 0
    for m in _DIRECTIVE.finditer(body):
        out.append(_braces(body[pos : m.start()]))
        pos = m.end()
        kind = m.group(1)
        if kind == "%":
            out.append("%")
            continue
        if kind not in _CONVERSIONS or used == len(texts):
            return None
        out.append("{" + str(texts[used]) + _CONVERSIONS[kind] + "}")
        used += 1
    if used != len(texts) or used == 0:
        return None
    out.append(_braces(body[pos:]))
    raw = "r" if prefix.group(1) in ("r", "R") else ""
    return "f" + raw + quote + "".join(out) + quote


def _operand(source: str, node: ast.expr, quote: str) -> str | None:
    text = ast.get_source_segment(source, node)
    if text is None or "\\" in text or "\n" in text or "#" in text or quote[0] in text:
        return None
    if isinstance(node, (ast.Lambda, ast.NamedExpr)):
        return "(" + text + ")"
    return " " + text if text.startswith("{") else text


def _may_be_tuple(node: ast.expr) -> bool:
    """A lone operand that is not plainly a single value: ``%`` would unpack it if it were a tuple."""
    return not isinstance(node, (ast.Constant, ast.Attribute, ast.Call, ast.Subscript, ast.BinOp, ast.Name))


def _braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")
