"""The soundness guard's checks of what a fix means, not only which tokens it keeps.

Each kind was found offered on real fixes, changing no name and no literal the
human kept (``bench/offer_audit.py``): a default made ``None`` before
``**arguments``, a list made a tuple where it is filled, text a pattern cannot
know, a ``None`` default for a lookup used at once. See also ``test_soundness.py``.
"""

from __future__ import annotations

from fixlore.abstraction import Skipped, SkipReason, instantiate
from fixlore.abstraction._soundness import pattern_unsound
from tests.abstraction._helpers import apply, code, diag_at, learn, rewrite_pattern

UP031 = "Use format specifiers instead of percent format"

B006 = ("Ruff", "B006", "Do not use mutable data structures for argument defaults")


def test_a_default_made_none_is_offered_only_where_the_function_checks_for_none() -> None:
    """Half of B006's fix: ``arguments={}`` -> ``arguments=None`` without the body's ``arguments or {}``.

    Seen on real fixes replayed offline: learned where the body already tested
    the parameter, offered for ``return self.handlers[method](**arguments)``,
    which then fails for every call that leaves ``arguments`` out.
    """
    before = code("""
        def connect(host, options={}):
            options = options or {}
            return open_link(host, **options)
        """)
    p = learn("python", before, before.replace("options={}", "options=None"), diag_at(before, "{}", *B006))
    unchecked = code("""
        class Box:
            def handle(self, method, arguments={}):
                return self.handlers[method](self.state, **arguments)
        """)
    result = instantiate(p, "python", unchecked, diag_at(unchecked, "{}", *B006), seen=3)
    assert isinstance(result, Skipped) and result.reason is SkipReason.UNSOUND, result
    checked = code("""
        class Box:
            def handle(self, method, arguments={}):
                if arguments is None:
                    arguments = {}
                return self.handlers[method](self.state, **arguments)
        """)
    fixed = apply(p, "python", checked, diag_at(checked, "{}", *B006))
    assert "def handle(self, method, arguments=None):" in fixed
    passed_on = code("""
        def embed(namespace={}, banner=""):
            start_shell(locals_=namespace, banner=banner)
        """)  # None handed to another call: that call's to take (as the humans' own fixes do)
    fixed = apply(p, "python", passed_on, diag_at(passed_on, "{}", *B006))
    assert "def embed(namespace=None, banner" in fixed


C408_LIST = ("Ruff", "C408", "Unnecessary `list()` call (rewrite as a literal)")


def test_a_list_made_a_tuple_in_a_default_is_not_made_a_tuple_where_it_is_filled() -> None:
    """``tags=list()`` -> ``tags=()``: a user's way with mutable defaults, learned as "delete ``list``".

    Seen on real fixes replayed offline: offered for ``self._data = list()``,
    which the next ``self._data.append(row)`` fails on.
    """
    before = code("""
        class Row:
            def __init__(self, values, tags=list()):
                self.tags = tags
        """)
    p = learn("python", before, before.replace("tags=list()", "tags=()"), diag_at(before, "list()", *C408_LIST))
    default = code("""
        class Sheet:
            def push(self, row, tags=list()):
                self.rows.append((row, tags))
        """)
    assert "def push(self, row, tags=()):" in apply(p, "python", default, diag_at(default, "list()", *C408_LIST))
    filled = code("""
        class Sheet:
            def wipe(self):
                self.rows = list()
        """)
    result = instantiate(p, "python", filled, diag_at(filled, "list()", *C408_LIST), seen=5)
    assert isinstance(result, Skipped) and result.reason is SkipReason.UNSOUND, result


def test_a_fix_that_brings_in_text_of_its_own_is_never_offered() -> None:
    """The human typed ``: %s`` into a message: no pattern keeps that text, so no instantiation can write it.

    Seen on real fixes replayed offline: the text left over was filled with
    another message of the same ``try`` (``'cannot read %serror when loading: %s'``).
    """
    pattern = rewrite_pattern(
        "' $S %s ' % $1", "' $S %s $S %s ' % ( $1 , $2 )", "Local variable `$2` is assigned to but never used", "F841"
    )
    assert pattern_unsound(pattern, seen=5) == "brings in text of its own"
    text = code("""
        def parse(name):
            try:
                return decode(name)
            except OSError as exc:
                raise NotFound('cannot decode %s' % name)
            except Exception as exc:
                raise NotFound('error when decoding: %s' % exc)
        """)
    diag = diag_at(text, "exc", "Ruff", "F841", "Local variable `exc` is assigned to but never used")
    result = instantiate(pattern, "python", text, diag, seen=5)
    assert isinstance(result, Skipped) and result.reason is SkipReason.UNSOUND, result
    # One text before, one after: sound.
    same_count = rewrite_pattern("' $S %s ' % $1", "f' $S { $1 } '", UP031, "UP031")
    assert pattern_unsound(same_count, seen=5) is None


B009 = ("Ruff", "B009", "Do not call `getattr` with a constant attribute value.")


def test_a_none_default_is_not_given_to_a_lookup_used_at_once() -> None:
    """``getattr(x, "a")`` -> ``getattr(x, "a", None)``: right before an ``is None`` test, wrong before ``[-1]``.

    Seen on real fixes replayed offline: ``getattr(_local, "stack")[-1]`` was
    offered ``getattr(_local, "stack", None)[-1]``, a ``TypeError`` where an
    ``AttributeError`` was.
    """
    before = code("""
        def current(state):
            found = getattr(state, "stack")
            return found
        """)
    after = before.replace('getattr(state, "stack")', 'getattr(state, "stack", None)')
    p = learn("python", before, after, diag_at(before, 'getattr(state, "stack")', *B009))
    kept = code("""
        def top(local):
            rv = getattr(local, "items")
            return rv
        """)
    assert 'getattr(local, "items", None)' in apply(p, "python", kept, diag_at(kept, 'getattr(local, "items")', *B009))
    used = code("""
        def top(local):
            rv = getattr(local, "items")[-1]
            return rv
        """)
    result = instantiate(p, "python", used, diag_at(used, 'getattr(local, "items")', *B009), seen=5)
    assert isinstance(result, Skipped) and result.reason is SkipReason.UNSOUND, result
