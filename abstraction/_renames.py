"""An ambiguous name (E741: ``l``, ``O``, ``I``) renamed, through its scope, after what it holds.

People rename an ``l`` by hand to the name the code around it gives the thing:
``for l in lines:`` -> ``line``, ``l = lines[i].split()`` -> ``line`` (an item
of a sequence: its name's last word, singular), ``l = Locale.parse(…)`` ->
``locale``, ``l = sql.TokenList(…)`` -> ``token_list``, ``l =
logging.getLogger(…)`` -> ``logger``, ``l = guess_lexer_for_file(…)`` ->
``lexer`` (what a call makes: the class it names, or what it gets, makes,
loads, finds). Learned as a rewrite (:mod:`~fixlore.abstraction._rewrites`),
the pattern stores which of the two ways the new name came from — a word of
this module — never a name; instantiation derives the name from the code at hand.

Each use of the variable is renamed with its binding, and nothing else: an
attribute (``x.l``) and a keyword argument's name (``f(l=…)``) are not the
variable. Nothing is offered (a rename that might change what the code does,
or pick a name the user has to undo) when

* the name is bound more than once in its scope (each binding is its own
  diagnostic, and people name each after what it holds) — except assignments
  one after another in a function's body, whose values are renamed one at a
  time (:func:`_one_of_several`) — or bound in a scope inside it, or named by
  ``global`` / ``nonlocal``;
* it is bound other than by an assignment to it alone or a ``for`` over a
  sequence (a parameter: its callers may pass it by name; a tuple target);
* the derived name is not a plain word of code: a keyword, a builtin, another
  ambiguous name, or a name the scope around already uses;
* it is a class body's (``self.l`` reads it elsewhere), or the file does not parse.
"""

from __future__ import annotations

import builtins
import functools
import itertools
import keyword
import re

import tree_sitter

from fixlore.abstraction._tree import Source, parsed

AMBIGUOUS = frozenset({"l", "I", "O"})
_BUILTINS = frozenset(dir(builtins))
_COMPREHENSIONS = frozenset(
    {"list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression"}
)
_SCOPES = frozenset({"function_definition", "lambda", "class_definition", "module"}) | _COMPREHENSIONS
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_PARAMETERS = frozenset(
    {
        "parameters",
        "lambda_parameters",
        "default_parameter",
        "typed_parameter",
        "typed_default_parameter",
        "list_splat_pattern",
        "dictionary_splat_pattern",
    }
)
_TARGETS = frozenset({"pattern_list", "tuple_pattern", "list_pattern", "expression_list", "tuple", "list"})

ITEM = "item"
"""An item of a sequence: ``for l in lines`` / ``l = lines[i]…`` -> ``line``."""
MADE = "made"
"""What a call makes: ``l = Locale.parse(…)`` -> ``locale``, ``l = getLogger(…)`` -> ``logger``."""


def rename_ambiguous(how: str, text: str, start: int, end: int) -> tuple[int, int, str] | None:
    """The rename of the ambiguous name bound at ``text[start:end]``, the name derived ``how``; ``None`` if none.

    The edit is one span, from the first use to the last, with every use of
    the variable in it renamed (code-point offsets).
    """
    found = _rename(how, text, start, end)
    return None if found is None else found[0]


def renamed_to(how: str, text: str, start: int, end: int) -> str | None:
    """The name :func:`rename_ambiguous` gives the variable, if it renames it."""
    found = _rename(how, text, start, end)
    return None if found is None else found[1]


@functools.lru_cache(maxsize=8)
def _rename(how: str, text: str, start: int, end: int) -> tuple[tuple[int, int, str], str] | None:
    old = text[start:end]
    if old not in AMBIGUOUS:
        return None
    src = parsed("python", text)
    if src.root.has_error:
        return None
    node = src.root.named_descendant_for_byte_range(src.byte(start), src.byte(end))
    if node is None or node.type != "identifier" or node.parent is None:
        return None
    new = _derived(how, node, src)
    if new is None or not _plain_word(new) or new == old:
        return None
    scope = _scope_of(node)
    if scope is None:
        return None
    region = _region(scope)
    uses = _uses(scope, region, old, node, src)
    if uses is None:
        return None
    statement = _body_statement(node, region)
    if _used(_outer(scope), new, src, statement.start_byte if statement is not None and uses[0] == node else None):
        return None
    first, last = uses[0].start_byte, uses[-1].end_byte
    pieces, at = [], first
    for use in uses:
        pieces.append(src.data[at : use.start_byte].decode("utf-8", errors="surrogatepass"))
        pieces.append(new)
        at = use.end_byte
    pieces.append(src.data[at:last].decode("utf-8", errors="surrogatepass"))
    return (src.char(first), src.char(last), "".join(pieces)), new


def _derived(how: str, node: tree_sitter.Node, src: Source) -> str | None:
    """The new name for the binding ``node``, derived ``how`` from what it is bound to."""
    parent = node.parent
    assert parent is not None
    if parent.type in ("for_statement", "for_in_clause") and parent.child_by_field_name("left") == node:
        iterable = parent.child_by_field_name("right")
        return _singular(_last_name(iterable, src)) if how == ITEM and iterable is not None else None
    if parent.type != "assignment" or parent.child_by_field_name("left") != node:
        return None
    value = parent.child_by_field_name("right")
    if value is None:
        return None
    if how == ITEM:
        return _item_of(value, src)
    if how == MADE and value.type == "call":
        return _made_by(value.child_by_field_name("function"), src)
    return None


def _last_name(node: tree_sitter.Node | None, src: Source) -> str | None:
    """The name an expression ends in: ``lines``, ``self.links``, ``mapping.lists()``, ``lines[1:]``."""
    while node is not None:
        if node.type == "identifier":
            return src.slice(node.start_byte, node.end_byte)
        if node.type == "attribute":
            node = node.child_by_field_name("attribute")
        elif node.type == "call":
            node = node.child_by_field_name("function")
        elif node.type == "subscript":
            node = node.child_by_field_name("value")
        else:
            return None
    return None


def _item_of(value: tree_sitter.Node, src: Source) -> str | None:
    """``lines[i]`` or ``lines[i].split(…)``: an item of a sequence named with a plural -> its singular."""
    node: tree_sitter.Node | None = value
    while node is not None:
        if node.type == "subscript":
            seq = node.child_by_field_name("value")
            if seq is not None and seq.type in ("identifier", "attribute"):
                return _singular(_last_name(seq, src))
            return None
        if node.type == "call":
            node = node.child_by_field_name("function")
        elif node.type == "attribute":
            node = node.child_by_field_name("object")
        else:
            return None
    return None


def _made_by(function: tree_sitter.Node | None, src: Source) -> str | None:
    """``TokenList`` -> ``token_list``, ``Locale.parse`` -> ``locale``, ``getLogger`` / ``get_logger`` -> ``logger``."""
    parts: list[str] = []
    node = function
    while node is not None and node.type == "attribute":
        attr = node.child_by_field_name("attribute")
        if attr is None:
            return None
        parts.insert(0, src.slice(attr.start_byte, attr.end_byte))
        node = node.child_by_field_name("object")
    if node is None or node.type != "identifier":
        return None
    parts.insert(0, src.slice(node.start_byte, node.end_byte))
    last = parts[-1]
    if _is_class(last):
        return _snake(_WORDS.findall(last))
    if len(parts) > 1 and _is_class(parts[-2]):
        return _snake(_WORDS.findall(parts[-2]))  # an alternative constructor: Locale.parse
    words = [w.lower() for w in _WORDS.findall(last)]
    if len(words) > 1 and words[0] in _MAKERS:  # get_logger, guess_lexer_for_file: what it gets
        made = list(itertools.takewhile(lambda w: w not in _LINKS, words[1:]))
        return _snake(made) if made else None
    return None


_MAKERS = frozenset(
    {"get", "make", "create", "new", "build", "load", "read", "open", "find", "fetch", "parse", "guess", "compile"}
)
"""A function named for what it makes after one of these verbs: ``getLogger`` -> ``logger``."""
_LINKS = frozenset({"for", "from", "by", "of", "to", "in", "on", "at", "with", "as", "or", "and"})
"""Words that end the name of what a function makes: ``guess_lexer_for_file`` -> ``lexer``."""


def _is_class(name: str) -> bool:
    """A class's name by convention: ``Locale``, ``TokenList`` (not ``HTTP``, a constant, nor ``_Private``)."""
    return name[:1].isupper() and any(c.islower() for c in name)


def _snake(words: list[str]) -> str | None:
    return "_".join(w.lower() for w in words) if words else None


_ITEMS_OF = {"splitlines": "line", "readlines": "line", "iterdir": "path"}
"""Standard methods whose name is no plural of what they yield (``text.splitlines()`` yields lines)."""


def _singular(name: str | None) -> str | None:
    """The singular of a name's last word: ``header_lines`` -> ``line``; ``None`` if it is not a plural."""
    if not name:
        return None
    if name in _ITEMS_OF:
        return _ITEMS_OF[name]
    words: list[str] = _WORDS.findall(name)
    if not words:
        return None
    word: str = words[-1].lower()
    if len(word) < 4 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return None
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "uses")):
        return word[:-2]
    return word[:-1]


def _plain_word(name: str) -> bool:
    return (
        name.isidentifier()
        and len(name) > 1
        and not keyword.iskeyword(name)
        and name not in _BUILTINS
        and name not in AMBIGUOUS
    )


def _scope_of(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The scope a binding is in: its comprehension, function or module; ``None`` for a class body.

    A class body's names other code reads as attributes.
    """
    clause = node.parent
    if clause is not None and clause.type == "for_in_clause":
        return clause.parent
    scope = node.parent
    while scope is not None and scope.type not in _SCOPES:
        scope = scope.parent
    if scope is None or scope.type in ("class_definition", "lambda") or scope.type in _COMPREHENSIONS:
        return None
    return scope


def _region(scope: tree_sitter.Node) -> tree_sitter.Node:
    """The part of ``scope`` that is the scope's own: a function's body (its defaults are the code around's)."""
    body = scope.child_by_field_name("body") if scope.type == "function_definition" else None
    return body if body is not None else scope


def _uses(
    scope: tree_sitter.Node, region: tree_sitter.Node, old: str, binding: tree_sitter.Node, src: Source
) -> list[tree_sitter.Node] | None:
    """Every use of the variable ``old`` bound at ``binding`` in ``scope`` (in order); ``None`` if unsure."""
    first_iterable = None
    if scope.type in _COMPREHENSIONS:
        first = next((c for c in scope.named_children if c.type == "for_in_clause"), None)
        if first is None or first != binding.parent:
            return None  # a later clause's variable: the first clause's iterable may use an outer one
        first_iterable = first.child_by_field_name("right")
    uses: list[tree_sitter.Node] = []
    bindings: list[tree_sitter.Node] = []
    nested = False
    for ident in _identifiers(region, old, src):
        if first_iterable is not None and _within(ident, first_iterable):
            return None  # `[l for l in l]`: the outer `l` is another variable
        role = _role(ident)
        if role == "other":
            continue
        if role in ("global", "parameter"):
            return None
        if _nested(ident, scope):  # in a scope inside: the same variable, unless bound there
            if role == "binding":
                return None  # (a parameter there was refused above)
            nested = True
        elif role == "binding":
            bindings.append(ident)
        uses.append(ident)
    if binding not in uses:
        return None
    if len(bindings) == 1:
        return uses
    return None if nested else _one_of_several(uses, bindings, binding, region)


def _one_of_several(
    uses: list[tree_sitter.Node], bindings: list[tree_sitter.Node], binding: tree_sitter.Node, region: tree_sitter.Node
) -> list[tree_sitter.Node] | None:
    """A name assigned several times, one statement after another: the uses of the value ``binding`` assigns.

    ``l = Locale.parse("a")`` / ``assert l.x`` / ``l = Locale.parse("b")`` / …: each
    assignment starts a new value, and renaming the uses of one, up to the next
    assignment, changes nothing else — where the statements run one after the
    other in the function's body (or the module's), none inside a loop or a
    branch, and no assignment reads the name it sets (``l = f(l)``).
    """
    statements: list[tree_sitter.Node] = []
    for bound in bindings:
        statement = _body_statement(bound, region)
        right = bound.parent.child_by_field_name("right") if bound.parent is not None else None
        if statement is None or right is None or any(_within(use, right) for use in uses):
            return None
        statements.append(statement)
    if any(use.start_byte < statements[0].start_byte for use in uses):
        return None  # read before it is first set: another variable's (a global's) value
    i = bindings.index(binding)
    start = statements[i].start_byte
    end = statements[i + 1].start_byte if i + 1 < len(statements) else region.end_byte
    return [use for use in uses if start <= use.start_byte < end]


def _identifiers(node: tree_sitter.Node, name: str, src: Source) -> list[tree_sitter.Node]:
    """The identifiers spelled ``name`` under ``node``, in order."""
    out: list[tree_sitter.Node] = []
    want = name.encode()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            if src.data[n.start_byte : n.end_byte] == want:
                out.append(n)
            continue
        stack.extend(reversed(n.children))
    return out


def _within(node: tree_sitter.Node, outer: tree_sitter.Node) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _role(ident: tree_sitter.Node) -> str:
    """What an identifier is: ``binding``, ``parameter``, ``global``, ``use``, or ``other`` (not a variable)."""
    parent = ident.parent
    if parent is None:
        return "use"
    if parent.type == "attribute" and parent.child_by_field_name("attribute") == ident:
        return "other"
    if parent.type == "keyword_argument" and parent.child_by_field_name("name") == ident:
        return "other"
    if parent.type in ("global_statement", "nonlocal_statement"):
        return "global"
    if parent.type in _PARAMETERS:
        return "parameter"
    if parent.type in ("function_definition", "class_definition") and parent.child_by_field_name("name") == ident:
        return "binding"
    if parent.type in ("dotted_name", "aliased_import", "import_statement", "import_from_statement"):
        return "binding"
    node = ident
    while node.parent is not None and node.parent.type in _TARGETS:
        node = node.parent
    owner = node.parent
    if owner is None:
        return "use"
    if owner.type in ("assignment", "for_statement", "for_in_clause") and owner.child_by_field_name("left") == node:
        return "binding"
    if owner.type == "named_expression" and owner.child_by_field_name("name") == node:
        return "binding"
    if owner.type == "as_pattern_target":
        return "binding"
    return "use"


def _outer(scope: tree_sitter.Node) -> tree_sitter.Node:
    """The scope whose names a new name must not meet: a comprehension's function (or module), else the scope."""
    node = scope
    while node.type in _COMPREHENSIONS and node.parent is not None:
        node = node.parent
        while node.type not in _SCOPES and node.parent is not None:
            node = node.parent
    return node


def _used(scope: tree_sitter.Node, name: str, src: Source, after: int | None = None) -> bool:
    """Whether ``name`` is a variable in ``scope`` (an attribute or a keyword's name does not count).

    ``after``: a statement of the scope's own body that assigns the renamed value; uses of
    ``name`` before it in that body are an earlier value's, which this one replaces there
    (``locale = …`` / ``assert locale.x`` above an ``l = …`` renamed to ``locale``).
    """
    for ident in _identifiers(scope, name, src):
        if _role(ident) == "other":
            continue
        if after is None or ident.start_byte >= after or _nested(ident, scope, classes=True):
            return True
    return False


def _body_statement(binding: tree_sitter.Node, region: tree_sitter.Node) -> tree_sitter.Node | None:
    """The statement ``binding = …`` when it is one of ``region``'s own (not inside a loop or a branch)."""
    assignment = binding.parent
    if assignment is None or assignment.type != "assignment" or assignment.child_by_field_name("left") != binding:
        return None
    statement = assignment.parent
    if statement is None or statement.type != "expression_statement" or statement.parent != region:
        return None
    return statement


def _nested(ident: tree_sitter.Node, scope: tree_sitter.Node, *, classes: bool = False) -> bool:
    """Whether ``ident`` is in a function, lambda or comprehension inside ``scope`` (or a class body, ``classes``)."""
    node = ident.parent
    while node is not None and node != scope:
        if node.type in _SCOPES and (classes or node.type != "class_definition"):
            return True
        node = node.parent
    return False


__all__ = ["AMBIGUOUS", "ITEM", "MADE", "rename_ambiguous", "renamed_to"]
