"""``log.info("…%s…" % (a, b))`` -> ``log.info("…%s…", a, b)``: the logging call formats its own arguments.

People who fix UP031 in a logging call often write no f-string: they pass the
operands to the call, which formats them only if the record is emitted (what
ruff's G002 and pylint's ``logging-not-lazy`` ask). Learned token by token, the
fix held for one arity and one operand structure; as a rewrite
(:mod:`~fixlore.abstraction._rewrites`) it holds for any. It is exact: the same
literal, every operand's source whole, in order; only the ``%`` and the tuple's
parentheses go, and the call's ``%`` formatting makes the same text of them.

It applies where the ``%`` expression is the message of a call of a logging
method (:data:`LOG_METHODS`; ``log`` after its level) of something named as a
logger is (:data:`_LOGGER`: not ``warnings.warn``) with no positional
argument after it, and the literal's directives take exactly the operands given
(``%(name)s`` directives: one mapping). Left alone: ``*`` widths, a starred
operand, a lone operand that may be a tuple (``%`` would unpack it, the call
would not), a comment after the literal, bytes and f-string literals, ``%``
directives Python would reject.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

import tree_sitter

from fixlore.abstraction._formats import DIRECTIVE, may_be_tuple, percent_expression, split_percent
from fixlore.abstraction._tree import Source, parsed

LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"})
"""Methods of :class:`logging.Logger` (and the module's functions) whose message the rewrite moves operands after."""

_LOGGER = re.compile(r"_*(?:\w+_)?(?:log|logger|logging)(?:_\w+)?", re.IGNORECASE)
"""What a logger is called (``log``, ``logger``, ``self._logger``, ``LOG``, ``access_log``, the ``logging`` module).

A method of the same name on anything else may take its arguments otherwise:
``warnings.warn(msg, category)``, ``parser.error(message)``."""


def log_args(text: str, start: int, end: int) -> tuple[int, int, str] | None:
    """UP031 at ``text[start:end]`` in a logging call: the edit passing the operands to the call, or ``None``."""
    start, end = percent_expression(text, start, end)
    src = parsed("python", text)
    b0, b1 = src.byte(start), src.byte(end)
    node = src.root.descendant_for_byte_range(b0, b1)
    if node is None or node.type != "binary_operator" or (node.start_byte, node.end_byte) != (b0, b1):
        return None
    operator, left = node.child_by_field_name("operator"), node.child_by_field_name("left")
    arguments = node.parent
    call = arguments.parent if arguments is not None else None
    if operator is None or operator.type != "%" or left is None or arguments is None or call is None:
        return None
    function = call.child_by_field_name("function")
    if arguments.type != "argument_list" or call.type != "call" or function is None or function.type != "attribute":
        return None
    method = function.child_by_field_name("attribute")
    if method is None:
        return None
    name = src.slice(method.start_byte, method.end_byte)
    receiver = function.child_by_field_name("object")
    if name not in LOG_METHODS or receiver is None or not _LOGGER.fullmatch(_last_name(src, receiver)):
        return None
    if any(c.type in ("list_splat", "dictionary_splat") for c in arguments.named_children):
        return None
    positional = [c for c in arguments.named_children if c.type not in ("keyword_argument", "comment")]
    ids = [c.id for c in positional]
    if node.id not in ids or ids.index(node.id) != (1 if name == "log" else 0) or positional[-1].id != node.id:
        return None
    literal_end = src.char(left.end_byte)
    operands = _operands(text[start:end])
    if operands is None or _has_comment(text[literal_end:end]):
        return None  # a comment after the literal: where it would go is not ours to guess
    literal = text[start:literal_end]
    return start, end, literal + "," + _break_kept(text[literal_end:end]) + ", ".join(operands)


def _break_kept(rest: str) -> str:
    """What goes between the message's comma and its operands: the user's line break after a ``%`` ending a line.

    ``"…%s" %`` then ``(a, b)`` on the next line becomes ``"…%s",`` then ``a, b``
    at that line's indentation, as people who make the fix by hand keep it;
    otherwise one space.
    """
    before, _, after = rest.partition("%")
    gap = after[: len(after) - len(after.lstrip())]
    return gap if "\n" in gap and not before.strip() else " "


def _last_name(src: Source, node: tree_sitter.Node) -> str:
    """The name a receiver is known by: ``log``, or ``logger`` of ``self.logger`` (``""`` for anything else)."""
    if node.type == "attribute":
        node = node.child_by_field_name("attribute") or node
    return src.slice(node.start_byte, node.end_byte) if node.type == "identifier" else ""


def _operands(expression: str) -> list[str] | None:
    """The source of each operand the call would take for ``expression`` (a ``%`` of a string literal)."""
    split = split_percent(expression)
    if split is None:
        return None  # bytes, an f-string, a name: not a message the call formats the same way
    source, left, right = split
    message = str(left.value)  # a str: split_percent checked it
    directives = [m for m in DIRECTIVE.finditer(message) if m.group(6) != "%"]
    if "%" in DIRECTIVE.sub("", message) or any("*" in (m.group(3) or "") + (m.group(4) or "") for m in directives):
        return None  # a directive Python rejects, or a width taken from the operands
    keyed = [m.group(1) is not None for m in directives]
    if any(keyed):
        # Formatted from one mapping: the call takes it as its one argument and formats from it.
        if not all(keyed) or isinstance(right, (ast.Tuple, ast.Constant)):
            return None
        operands: list[ast.expr] = [right]
    else:
        operands = list(right.elts) if isinstance(right, ast.Tuple) else [right]
        if not isinstance(right, ast.Tuple) and may_be_tuple(right):
            return None
        if not directives or len(operands) != len(directives):
            return None
    if any(isinstance(o, (ast.Starred, ast.NamedExpr)) for o in operands):
        return None
    texts = [ast.get_source_segment(source, o) for o in operands]
    if any(t is None for t in texts):
        return None
    return [str(t) for t in texts]


def _has_comment(source: str) -> bool:
    """Whether ``source`` (the ``%`` and its operands) holds a comment (unreadable: as if it did)."""
    try:
        return any(
            tok.type == tokenize.COMMENT for tok in tokenize.generate_tokens(io.StringIO("(" + source + "\n)").readline)
        )
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return True


__all__ = ["LOG_METHODS", "log_args"]
