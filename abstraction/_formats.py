"""``"…%s…" % args`` -> ``f"…{arg}…"``: one fix learned whatever the operands are.

A shape learned token by token fixes one arity and one operand structure: the
fix of ``"<%s %r>" % (a, b.c)`` says nothing to ``"%s: %d" % (key, n)``. Yet
the user's fix is the same mechanical rewrite every time, learned and applied
as such (:mod:`~fixlore.abstraction._rewrites`). Every operand's
source is carried into the f-string, in order, so none is ever dropped, each
directive's flags, width and precision with it (``%08x`` -> ``{x:08x}``,
``%-5s`` -> ``{x!s:<5}``); what the rewrite cannot express exactly
(``%(name)s``, ``%*d``, ``%c``, operands with quotes, backslashes or line
breaks, a single operand that may be a tuple) is left alone. An operand that
is ``str(x)``, ``repr(x)`` or ``ascii(x)`` for a ``%s`` becomes the conversion
it is (``{x!r}``, as ruff's RUF010 asks; ``{repr(x)}`` is the same text, but
a new diagnostic), unless the file binds that name itself.
"""

from __future__ import annotations

import ast
import io
import re
import string
import tokenize

from fixlore.abstraction._ast import parse_ast
from fixlore.abstraction._scope import visible_names
from fixlore.abstraction._tree import parsed

DIRECTIVE = re.compile(r"%(\([^)]*\))?([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?([hlL]?)([diouxXeEfFgGcrsa%])")
"""One ``%`` directive as Python reads it: mapping key, flags, width, precision, length modifier, conversion.

A ``%`` it does not match is one ``%`` formatting refuses (``ValueError``)."""
_PREFIX = re.compile(r"([uUrR]?)(['\"]{3}|['\"])")
_BETWEEN = frozenset(
    {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT}
)
"""Tokens that may stand between the pieces of an implicitly concatenated literal."""
_CONVERSIONS = {"str": "s", "repr": "r", "ascii": "a"}
"""Builtins whose call on a ``%s`` operand is an f-string conversion (``{x!r}``)."""
_CALLS = re.compile(r"\b(?:str|repr|ascii)\s*\(")
_INTEGER = frozenset("dixXo")
_FLOAT = frozenset("eEfFgG")


def percent_to_fstring(
    expression: str, *, plain_d: bool = False, integers: bool | None = None, builtins: frozenset[str] = frozenset()
) -> str | None:
    """The f-string equal to ``expression`` (a ``%`` of a string literal), or ``None`` if unsure.

    ``%d`` becomes ``{x:d}``: the same text for an ``int`` or a ``bool``, and an
    error, never another text, for a ``float`` (``%d`` truncates it). With
    ``plain_d``, the user's habit once they showed it, ``{x}``. ``integers``:
    ``True`` converts only an expression with a ``%d`` (or ``%i``), ``False``
    only one without, ``None`` either. ``builtins``: those of ``str``, ``repr``
    and ``ascii`` that are the builtins where the expression stands (their calls
    become conversions).
    An implicit concatenation keeps its pieces, and only those with a directive
    become f-strings.
    """
    split = split_percent(expression)
    if split is None:
        return None
    source, left, right = split
    literal = ast.get_source_segment(source, left)
    pieces = _pieces(literal) if literal is not None else None
    if not pieces:
        return None
    operands = right.elts if isinstance(right, ast.Tuple) else [right]
    if any(isinstance(o, ast.Starred) for o in operands):
        return None
    if not isinstance(right, ast.Tuple) and may_be_tuple(right):
        return None
    quotes = {quote[0] for _, _, _, quote in pieces}
    texts = [_operand(source, o, quotes) for o in operands]
    if any(t is None for t in texts):
        return None
    folded = [_conversion(source, o, quotes, builtins) for o in operands]
    assert literal is not None
    out: list[str] = []
    pos = 0
    used = 0
    integer_fields = 0
    for start, end, prefix, quote in pieces:
        out.append(literal[pos:start])  # what stands between two pieces: space, a line break, a comment
        body = literal[start + len(prefix) + len(quote) : end - len(quote)]
        converted = _converted(body, [str(t) for t in texts[used:]], folded[used:], plain_d)
        if converted is None:
            return None
        text, taken, taken_integers = converted
        used += taken
        integer_fields += taken_integers
        if taken:
            raw = "r" if "r" in prefix.lower() else ""
            out.append("f" + raw + quote + text + quote)
        else:
            out.append(prefix + quote + body.replace("%%", "%") + quote)
        pos = end
    if used != len(texts) or used == 0:
        return None
    if integers is not None and integers != (integer_fields > 0):
        return None
    return "".join(out)


def split_percent(expression: str) -> tuple[str, ast.Constant, ast.expr] | None:
    """``expression`` (``literal % operands``) parsed: the source its nodes index, the string literal, the operands.

    ``None`` unless it is a ``%`` whose left is a ``str`` literal (not bytes, not an f-string).
    """
    source = "(" + expression + "\n)"
    try:
        node = parse_ast(source, "eval").body
    except (SyntaxError, ValueError):
        return None
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)):
        return None
    left = node.left
    if not (isinstance(left, ast.Constant) and isinstance(left.value, str)):
        return None
    return source, left, node.right


def _pieces(literal: str) -> list[tuple[int, int, str, str]] | None:
    """The string literals an (implicitly concatenated) literal is made of: ``(start, end, prefix, quote)``.

    ``None`` for what the rewrite leaves alone: bytes, f-strings, a body holding its own quote.
    """
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(literal).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    lines = literal.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    out: list[tuple[int, int, str, str]] = []
    for tok in tokens:
        if tok.type in _BETWEEN:
            continue
        if tok.type != tokenize.STRING:
            return None  # an f-string's pieces (3.12), or anything else
        start = offsets[tok.start[0] - 1] + tok.start[1]
        end = offsets[tok.end[0] - 1] + tok.end[1]
        prefix = _PREFIX.match(tok.string)
        if prefix is None:
            return None  # bytes, f-strings
        quote = prefix.group(2)
        body = tok.string[prefix.end() : len(tok.string) - len(quote)]
        if not tok.string.endswith(quote) or quote in body:
            return None
        out.append((start, end, prefix.group(1), quote))
    return out


def _converted(
    body: str, operands: list[str], folded: list[tuple[str, str] | None], plain_d: bool
) -> tuple[str, int, int] | None:
    """``body`` with its directives replaced by the next of ``operands``, how many it took, how many ``%d``.

    ``folded[i]``: operand ``i`` as ``(x, conversion)`` when it is ``str(x)`` (``repr``, ``ascii``).
    """
    out: list[str] = []
    pos = 0
    used = 0
    integer_fields = 0
    for m in DIRECTIVE.finditer(body):
        if "%" in body[pos : m.start()]:
            return None  # a `%` no directive reads: `%` itself would refuse it
        out.append(_braces(body[pos : m.start()]))
        pos = m.end()
        key, flags, width, precision, length, kind = m.groups()
        if key is not None or length or "*" in (width or "") + (precision or ""):
            return None  # %(name)s, %ld, %*d: not a field of one operand
        width = width or ""
        if kind == "%":
            if flags or width or precision is not None:
                return None
            out.append("%")
            continue
        field = _field(flags, width, precision, kind, plain_d)
        if field is None or used == len(operands):
            return None
        fold = folded[used]
        if fold is not None and kind == "s" and (not field or field.startswith("!s")):
            out.append("{" + fold[0] + "!" + fold[1] + field[2:] + "}")  # %s of repr(x): {x!r}
        else:
            out.append("{" + operands[used] + field + "}")
        used += 1
        integer_fields += kind in "di"
    if "%" in body[pos:]:
        return None  # a lone `%` at the end: `%` itself would refuse it
    out.append(_braces(body[pos:]))
    return "".join(out), used, integer_fields


def _field(flags: str, width: str, precision: str | None, kind: str, plain_d: bool) -> str | None:
    """What follows the operand in the f-string's field (``!r``, ``:>5``, ``:.2f``), or ``None``."""
    if kind in "sra":
        if set(flags) - {"-"}:
            return None
        spec = ("<" if flags else ">") + width if width else ""
        spec += "" if precision is None else "." + precision
        if kind == "s" and not spec:
            return ""
        return "!" + kind + (":" + spec if spec else "")
    if kind not in _INTEGER and kind not in _FLOAT:
        return None  # %c, %(name)s, %*d ...
    if (precision is not None and kind in _INTEGER) or ("#" in flags and kind in "di"):
        return None  # %.3d pads with zeros, which no format spec says
    align = "<" if "-" in flags else ""
    sign = "+" if "+" in flags else " " if " " in flags else ""
    zero = "0" if "0" in flags and not align else ""
    alternate = "#" if "#" in flags else ""
    kind = "d" if kind in "di" else kind
    spec = align + sign + alternate + zero + width + ("" if precision is None else "." + precision) + kind
    if plain_d and spec == "d":
        return ""
    return ":" + spec


def percent_rewrite(
    text: str, start: int, end: int, *, integers: bool, plain_d: bool = False
) -> tuple[int, int, str] | None:
    """UP031 at ``text[start:end]``: the edit ``(start, end, f-string)``, or ``None``.

    Three rewrites use it, so evidence stays with what the user showed: without
    ``%d`` (exact whatever the operands), with ``%d`` as ``{x:d}`` (an error, never
    another text, for a float), and with ``%d`` as ``{x}`` (``plain_d``: the habit
    of a user who knows their operands are integers). Where ruff has no fix of
    its own (``%d``, a width), its diagnostic covers the literal alone: the
    rewrite takes the whole ``literal % operands`` it is the left of.
    """
    start, end = percent_expression(text, start, end)
    expression = text[start:end]
    new = percent_to_fstring(
        expression, plain_d=plain_d, integers=integers, builtins=_conversion_builtins(text, start, expression)
    )
    return None if new is None else (start, end, new)


def _conversion_builtins(text: str, start: int, expression: str) -> frozenset[str]:
    """Those of ``str``, ``repr`` and ``ascii`` that are the builtins at ``start`` (the file binds none of them there).

    Parsed only when ``expression`` calls one of them.
    """
    if not _CALLS.search(expression):
        return frozenset()
    src = parsed("python", text)
    bound = visible_names(src.root, src.data, src.byte(start))
    return frozenset() if bound is None else frozenset(_CONVERSIONS) - bound


def percent_expression(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)``, or the ``%`` expression whose left operand is the string literal there."""
    snippet = text[start:end].lstrip()
    if not snippet[:4].lstrip("uUrRbB").startswith(("'", '"')) or "%" not in text[end : end + 200]:
        return start, end  # not a literal, or no `%` after it (most diagnostics: the whole expression)
    src = parsed("python", text)
    node = src.root.descendant_for_byte_range(src.byte(start), src.byte(end))
    parent = node.parent if node is not None else None
    if (
        node is None
        or parent is None
        or node.type not in ("string", "concatenated_string")
        or parent.type != "binary_operator"
        or (node.start_byte, node.end_byte) != (src.byte(start), src.byte(end))
    ):
        return start, end
    left, operator = parent.child_by_field_name("left"), parent.child_by_field_name("operator")
    if left is None or operator is None or left.start_byte != node.start_byte or operator.type != "%":
        return start, end
    return src.char(parent.start_byte), src.char(parent.end_byte)


def _operand(source: str, node: ast.expr, quotes: set[str]) -> str | None:
    text = ast.get_source_segment(source, node)
    if text is None or "\\" in text or "\n" in text or "#" in text or any(q in text for q in quotes):
        return None
    if isinstance(node, (ast.Lambda, ast.NamedExpr)):
        return "(" + text + ")"
    return " " + text if text.startswith("{") else text


def _conversion(source: str, node: ast.expr, quotes: set[str], builtins: frozenset[str]) -> tuple[str, str] | None:
    """``str(x)`` (``repr``, ``ascii``, one of ``builtins``) as ``("x", "s")``; ``None`` for any other operand."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in builtins
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
    ):
        return None
    text = _operand(source, node.args[0], quotes)
    return None if text is None else (text, _CONVERSIONS[node.func.id])


def may_be_tuple(node: ast.expr) -> bool:
    """A lone operand that is not plainly a single value: ``%`` would unpack it if it were a tuple."""
    return not isinstance(node, (ast.Constant, ast.Attribute, ast.Call, ast.Subscript, ast.BinOp, ast.Name))


def _braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


_ACCESSORS = re.compile(r"(?:\.[A-Za-z_]\w*|\[\d+\])*")
"""What may follow a field's argument in ``str.format``: ``.name`` and ``[0]`` (``[key]`` is left alone)."""


def format_to_fstring(expression: str, builtins: frozenset[str] = frozenset()) -> str | None:
    r"""The f-string equal to ``expression`` (``"…{}…".format(args)``), or ``None`` if unsure.

    Each argument's source goes into the field that uses it, with the field's
    conversion, format spec and ``.name``/``[0]`` accessors (``"{0.x!r:>5}"`` ->
    ``{a.x!r:>5}``). Left alone: an argument no field uses (``format`` evaluates
    it; the f-string would drop it), ``*args``/``**kwargs``, a nested field in a
    spec, ``[key]`` accessors, an argument used twice unless it is a name, an
    attribute of one or a constant, arguments used out of their order when one
    of them may do something (a call: ``format`` evaluates them in order first),
    operands with quotes, backslashes or line breaks, and a literal whose fields
    differ in its source and its value (``\x7b`` is a brace to ``format``).
    An implicit concatenation keeps its pieces; those without a field stay
    plain strings (their ``{{`` becomes ``{``). ``builtins``: as for
    :func:`percent_to_fstring` (``{}`` of ``repr(x)`` is ``{x!r}``).
    """
    source = "(" + expression + "\n)"
    try:
        node = parse_ast(source, "eval").body
    except (SyntaxError, ValueError):
        return None
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
        and ast.get_source_segment(source, node) == expression.strip()
    ):
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    literal_node = node.func.value
    literal = ast.get_source_segment(source, literal_node)
    pieces = _pieces(literal) if literal is not None else None
    if not pieces or literal is None:
        return None
    # The nodes' columns count UTF-8 bytes: the slices are taken of the source's bytes.
    data = source.encode()
    offsets = [0]
    for line in data.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    lit_start = offsets[literal_node.lineno - 1] + literal_node.col_offset
    lit_end = offsets[(literal_node.end_lineno or 1) - 1] + (literal_node.end_col_offset or 0)
    call_start = offsets[node.lineno - 1] + node.col_offset
    dot = data.rfind(b".", lit_end, offsets[(node.func.end_lineno or 1) - 1] + (node.func.end_col_offset or 0))
    before, between = data[call_start:lit_start].decode(), data[lit_end:dot].decode()
    if before.strip("( \t\n") or between.strip(") \t\n") or before.count("(") != between.count(")"):
        return None
    quotes = {quote[0] for _, _, _, quote in pieces}
    args = [_operand(source, a, quotes) for a in node.args]
    kwargs = {str(k.arg): _operand(source, k.value, quotes) for k in node.keywords}
    if any(a is None for a in args) or any(a is None for a in kwargs.values()):
        return None
    nodes: dict[int | str, ast.expr] = dict(enumerate(node.args))
    nodes.update({str(k.arg): k.value for k in node.keywords})
    texts: dict[int | str, str] = {i: str(a) for i, a in enumerate(args)}
    texts.update({k: str(v) for k, v in kwargs.items()})
    folded = {k: _conversion(source, n, quotes, builtins) for k, n in nodes.items()}
    used: list[int | str] = []
    auto: list[int] = [0]
    out: list[str] = []
    pos = 0
    for start, end, prefix, quote in pieces:
        out.append(literal[pos:start])
        body = literal[start + len(prefix) + len(quote) : end - len(quote)]
        converted = _format_fields(prefix, quote, body, (texts, nodes, folded), used, auto)
        if converted is None:
            return None
        if converted[1]:
            out.append("f" + ("r" if "r" in prefix.lower() else "") + quote + converted[0] + quote)
        else:
            out.append(prefix + quote + body.replace("{{", "{").replace("}}", "}") + quote)
        pos = end
    if not used or set(used) != set(texts):
        return None
    if any(used.count(k) > 1 and not _pure(nodes[k]) for k in texts):
        return None
    first_use = list(dict.fromkeys(used))
    if first_use != list(texts) and not all(_pure(n) for n in nodes.values()):
        return None
    return before + "".join(out) + between.rstrip()  # `.format` on a line of its own: no blank tail


def _format_fields(
    prefix: str,
    quote: str,
    body: str,
    arguments: tuple[dict[int | str, str], dict[int | str, ast.expr], dict[int | str, tuple[str, str] | None]],
    used: list[int | str],
    auto: list[int],
) -> tuple[str, bool] | None:
    """One piece's body as an f-string's, and whether it has a field (``used``, ``auto``: shared, updated).

    ``arguments``: each argument's source, node, and what it is as a conversion (``repr(x)``: ``("x", "r")``).
    """
    texts, nodes, folded = arguments
    formatter = string.Formatter()
    try:
        fields = list(formatter.parse(body))
        value = ast.literal_eval(prefix + quote + body + quote)
        if [f[1:] for f in formatter.parse(value)] != [f[1:] for f in fields]:
            return None
    except (ValueError, SyntaxError, TypeError):
        return None
    out: list[str] = []
    has_field = False
    for text, name, spec, conversion in fields:
        out.append(_braces(text))
        if name is None:
            continue
        has_field = True
        head = re.match(r"[A-Za-z_]\w*|\d*", name)
        rest = name[head.end() :] if head else name
        if head is None or _ACCESSORS.fullmatch(rest) is None or (spec and ("{" in spec or "}" in spec)):
            return None
        key: int | str
        if head.group() == "":
            if auto[0] < 0:
                return None  # automatic and manual numbering mixed: format refuses it
            key, auto[0] = auto[0], auto[0] + 1
        elif head.group().isdigit():
            if auto[0] > 0:
                return None
            key, auto[0] = int(head.group()), -1
        else:
            key = head.group()
        if key not in texts:
            return None
        used.append(key)
        expr = texts[key]
        fold = folded[key]
        if fold is not None and not rest and not conversion:
            expr, conversion = fold  # {} of repr(x): {x!r}, as ruff's RUF010 asks
        elif rest and not isinstance(nodes[key], (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
            expr = "(" + expr + ")"
        out.append("{" + expr + rest + ("!" + conversion if conversion else "") + (":" + spec if spec else "") + "}")
    return "".join(out), has_field


def _pure(node: ast.expr) -> bool:
    """A name, an attribute of one, or a constant: evaluating it twice, or later, is the same."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, (ast.Name, ast.Constant))


def format_rewrite(text: str, start: int, end: int) -> str | None:
    """UP032 (or UP030, as users fix it) at ``text[start:end]``: the call as an f-string, or ``None``."""
    expression = text[start:end]
    return format_to_fstring(expression, _conversion_builtins(text, start, expression))
