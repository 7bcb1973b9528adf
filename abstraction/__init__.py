"""fixlore's abstraction layer: concrete fixes in, privacy-safe patterns out, and back.

Pure functions, no I/O, no pygls. Entry points never raise on user code; they
return a result (:class:`Extracted`, :class:`Instantiated`), a
:class:`Skipped` with a :class:`SkipReason`, or a :class:`Failed` with the
traceback text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fixlore.abstraction._fields import code_problem, kind_problem, language_problem, shared_problem, source_problem
from fixlore.abstraction._generalise import generalise
from fixlore.abstraction._import_lines import is_relative, top_level_imports
from fixlore.abstraction._instantiate import instantiate, load_tables, may_apply
from fixlore.abstraction._pattern import (
    PATTERN_FORMAT_VERSION,
    ActionTemplate,
    Anchor,
    EditShape,
    FixCategory,
    Hole,
    Origin,
    Pattern,
    Scope,
    Signature,
    canonical_json,
    fingerprint_of,
)
from fixlore.abstraction._placeholders import is_placeholder
from fixlore.abstraction._privacy import verify_privacy, verify_shared
from fixlore.abstraction._py2 import COMPAT_NAMES, PY3_NAMES
from fixlore.abstraction._results import (
    Extracted,
    Failed,
    Instantiated,
    PrivacyVerdict,
    Skipped,
    SkipReason,
)
from fixlore.abstraction._soundness import brings_values
from fixlore.abstraction._suppressions import writes_suppression
from fixlore.abstraction._templates import (
    abstract_action,
    abstract_rule_action,
    abstract_signature,
    first_line,
    quoted_names,
)
from fixlore.abstraction._text import (
    DiagnosticInfo,
    Position,
    TextEdit,
    TextRange,
    apply_edits,
    common_ends,
    line_opcodes,
    position_at,
)
from fixlore.abstraction._tree import parsed
from fixlore.abstraction.languages import get_parser, language_for, supported_languages
from fixlore.abstraction.syntax import SyntaxCode, SyntaxProblem, syntax_problems

if TYPE_CHECKING:
    from fixlore.abstraction._extract import extract_pattern


def __getattr__(name: str) -> Any:
    # Extraction pulls in libcst (a third of a second to import); the server
    # needs it only once learning starts, not to answer `initialize`.
    if name == "extract_pattern":
        from fixlore.abstraction._extract import extract_pattern

        return extract_pattern
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "brings_values",
    "COMPAT_NAMES",
    "PY3_NAMES",
    "is_relative",
    "parsed",
    "quoted_names",
    "top_level_imports",
    "code_problem",
    "kind_problem",
    "language_problem",
    "shared_problem",
    "source_problem",
    "PATTERN_FORMAT_VERSION",
    "ActionTemplate",
    "Anchor",
    "DiagnosticInfo",
    "EditShape",
    "Extracted",
    "Failed",
    "FixCategory",
    "Hole",
    "Instantiated",
    "Origin",
    "Pattern",
    "Position",
    "PrivacyVerdict",
    "Scope",
    "Signature",
    "SkipReason",
    "Skipped",
    "SyntaxCode",
    "SyntaxProblem",
    "TextEdit",
    "TextRange",
    "abstract_action",
    "abstract_rule_action",
    "abstract_signature",
    "apply_edits",
    "canonical_json",
    "extract_pattern",
    "fingerprint_of",
    "first_line",
    "generalise",
    "get_parser",
    "instantiate",
    "may_apply",
    "load_tables",
    "is_placeholder",
    "language_for",
    "common_ends",
    "line_opcodes",
    "position_at",
    "supported_languages",
    "syntax_problems",
    "verify_privacy",
    "writes_suppression",
    "verify_shared",
]
