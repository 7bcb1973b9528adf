"""``log.info("…%s" % x)`` -> ``log.info("…%s", x)``: learned once by hand, for any operands, the same message."""

from __future__ import annotations

import logging

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fixlore.abstraction import Instantiated, Skipped, instantiate, verify_privacy
from fixlore.abstraction._logging_args import log_args
from tests.abstraction._helpers import apply, code, diag_at, learn

UP031 = ("Ruff", "UP031", "Use format specifiers instead of percent format")


def _rewritten(text: str, needle: str) -> str | None:
    start = text.index(needle)
    change = log_args(text, start, start + len(needle))
    return None if change is None else text[: change[0]] + change[2] + text[change[1] :]


def test_the_operands_go_to_the_logging_call_whole_and_in_order() -> None:
    assert _rewritten('log.info("Starting %s" % url)\n', '"Starting %s" % url') == 'log.info("Starting %s", url)\n'
    text = 'self.log.info("Pid %s killed (> %s)" % (\n    pid, self.max_mem))\n'
    assert _rewritten(text, '"Pid %s killed (> %s)" % (\n    pid, self.max_mem)') == (
        'self.log.info("Pid %s killed (> %s)", pid, self.max_mem)\n'
    )
    # keyword arguments after the message stay; `log` takes its level first
    assert _rewritten('logger.debug("%d: %s" % (n, host), exc_info=True)\n', '"%d: %s" % (n, host)') == (
        'logger.debug("%d: %s", n, host, exc_info=True)\n'
    )
    assert _rewritten('logging.log(INFO, "x %s" % y)\n', '"x %s" % y') == 'logging.log(INFO, "x %s", y)\n'
    for logger in ("self._logger", "LOG", "app.logger", "self.server.access_log", "logging"):
        assert _rewritten(f'{logger}.error("x %r" % y)\n', '"x %r" % y') == f'{logger}.error("x %r", y)\n'
    # one mapping for named directives; `%%` takes no operand; a concatenation keeps its pieces
    assert _rewritten('log.info("%(a)s" % d)\n', '"%(a)s" % d') == 'log.info("%(a)s", d)\n'
    assert _rewritten('log.info("100%% of %s" % y)\n', '"100%% of %s" % y') == 'log.info("100%% of %s", y)\n'
    pieces = '"a %s "\n            "b %s"'
    assert _rewritten(f"log.warning({pieces} % (x, y))\n", f"{pieces} % (x, y)") == f"log.warning({pieces}, x, y)\n"


def test_a_line_break_after_the_percent_stays_where_the_user_had_it() -> None:
    """``"…" %`` ending a line, the operands on the next: the comma takes the ``%``'s place, the line stays."""
    text = 'def connect(self):\n    log.info("Opening %s to %s" %\n             (self.name, self.peer))\n'
    assert _rewritten(text, '"Opening %s to %s" %\n             (self.name, self.peer)') == (
        'def connect(self):\n    log.info("Opening %s to %s",\n             self.name, self.peer)\n'
    )
    # a break inside the operands is not that: they are joined as before
    text = 'log.info("%s %s" % (a,\n    b))\n'
    assert _rewritten(text, '"%s %s" % (a,\n    b)') == 'log.info("%s %s", a, b)\n'


def test_what_the_call_would_format_otherwise_is_left_alone() -> None:
    for text, needle in (
        ('print("x %s" % y)\n', '"x %s" % y'),  # not a logging call
        ('warnings.warn("x %s" % y)\n', '"x %s" % y'),  # the second argument is the warning's category
        ('parser.error("x %s" % y)\n', '"x %s" % y'),  # one message, formatted by nobody
        ('self.catalog.error("x %s" % y)\n', '"x %s" % y'),
        ('self.info("x %s" % y)\n', '"x %s" % y'),
        ('get_logger().info("x %s" % y)\n', '"x %s" % y'),  # not named: not known to be one
        ('log.info("x %s" % y, z)\n', '"x %s" % y'),  # a positional argument after the message
        ('log.info(("x %s" % y))\n', '"x %s" % y'),  # in parentheses of its own: not the call's argument
        ('log.info("x %s" % (a, b))\n', '"x %s" % (a, b)'),  # more operands than directives
        ('log.info("x %s %s" % pair)\n', '"x %s %s" % pair'),  # `%` unpacks a tuple, the call would not
        ('log.info("x %s" % [y])\n', '"x %s" % [y]'),  # a lone operand that is not plainly one value
        ('log.info(b"x %s" % y)\n', 'b"x %s" % y'),
        ('log.info("%*d" % (3, y))\n', '"%*d" % (3, y)'),  # a width taken from the operands
        ('log.info("%(a)s %s" % d)\n', '"%(a)s %s" % d'),  # named and positional directives mixed
        ('log.info("x %s" % (*ys,))\n', '"x %s" % (*ys,)'),
        ('log.info("x %s" % (y,  # why\n))\n', '"x %s" % (y,  # why\n)'),  # a comment among the operands
        ('log.info("100%" % ())\n', '"100%" % ()'),  # a directive Python rejects
        ('log.info(*args, "x %s" % y)\n', '"x %s" % y'),
    ):
        assert _rewritten(text, needle) is None, text


def _learned_once():  # type: ignore[no-untyped-def]
    before = code(
        """
        def spawn(log, zq_worker):
            log.info("zq_spawning %s" % zq_worker.pid)
        """
    )
    after = before.replace('"zq_spawning %s" % zq_worker.pid', '"zq_spawning %s", zq_worker.pid')
    return learn("python", before, after, diag_at(before, '"zq_spawning %s" % zq_worker.pid', *UP031))


def test_one_fix_by_hand_is_learned_as_the_rewrite_and_holds_no_user_code() -> None:
    pattern = _learned_once()
    assert ("rewrite", "percent_log_args") in pattern.extra
    assert verify_privacy(pattern).ok
    assert "zq_" not in repr(pattern) and "spawning" not in repr(pattern)


def test_learned_on_one_operand_it_passes_three_and_keeps_the_layout_of_the_call() -> None:
    text = code(
        """
        def report(self, url, status, took):
            self.logger.warning(
                "GET %s -> %d in %.2f s" % (url, status, took),
                stack_info=False,
            )
        """
    )
    needle = '"GET %s -> %d in %.2f s" % (url, status, took)'
    assert apply(_learned_once(), "python", text, diag_at(text, needle, *UP031)) == text.replace(
        needle, '"GET %s -> %d in %.2f s", url, status, took'
    )


def test_outside_a_logging_call_the_learned_rewrite_offers_nothing() -> None:
    text = 'def label(n):\n    return "n=%s" % n\n'
    result = instantiate(_learned_once(), "python", text, diag_at(text, '"n=%s" % n', *UP031))
    assert isinstance(result, Skipped) or (isinstance(result, Instantiated) and not result.edits)


class _Messages(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


_DIRECTIVES = st.sampled_from(["%s", "%r", "%d", "%5s", "%-3s", "%x", "%.2f", "%%"])
_VALUES = st.one_of(st.integers(-999, 999), st.text(alphabet="ab c%{}", max_size=4), st.none())


@settings(max_examples=150, deadline=None)
@given(
    pieces=st.lists(st.tuples(st.text(alphabet="ab :=", max_size=3), _DIRECTIVES), min_size=1, max_size=4),
    values=st.lists(_VALUES, min_size=4, max_size=4),
)
def test_the_call_logs_the_very_message_the_percent_made(pieces: list[tuple[str, str]], values: list[object]) -> None:
    literal = "".join(glue + directive for glue, directive in pieces)
    count = sum(directive != "%%" for _, directive in pieces)
    assume(count > 0)  # a literal with no directive is no UP031
    names = [f"v{i}" for i in range(count)]
    operands = f"({', '.join(names)},)" if count > 1 else names[0]
    bound = dict(zip(names, values, strict=False))
    for name, directive in zip(names, [d for _, d in pieces if d != "%%"], strict=True):
        if directive in ("%d", "%x", "%.2f") and not isinstance(bound[name], int):
            bound[name] = 7  # a number where the directive wants one (the error case is not the point here)
    expression = f'"{literal}" % {operands}'
    text = f"log.warning({expression})\n"
    new = _rewritten(text, expression)
    assert new is not None, text
    logger = logging.getLogger("fixlore-test-logging-args")
    logger.propagate = False
    handler = _Messages()
    logger.addHandler(handler)
    try:
        for source in (text, new):
            exec(source, {"log": logger, **bound})  # noqa: S102 - the test's own generated code
    finally:
        logger.removeHandler(handler)
    assert handler.messages[0] == handler.messages[1], (text, new)
    assert all(name in new for name in names)
