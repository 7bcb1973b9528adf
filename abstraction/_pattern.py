"""The pattern: fixlore's abstract, privacy-safe description of one kind of fix.

This module is the contract between the three layers. ``abstraction`` builds
patterns from concrete edits, ``knowledge`` stores and ranks them, ``lsp``
turns them back into code actions. Everything here is plain, frozen data with
a canonical JSON form; nothing here reads user code.

Vocabulary
----------
signature
    What a diagnostic *is*, abstractly: language, the tool that reported it,
    its rule code and its message as a template ("Undefined name `$1`").
rule key
    ``(language, source, code)``: the coarse bucket the knowledge index is
    keyed by. Several signatures (message templates) share one rule key.
shape
    What the fix *does*, abstractly: the smallest enclosing syntactic unit(s)
    before and after, as abstract token text (``$1 == None`` -> ``$1 is None``),
    and the anchor saying where in the file's structure the edit went.
action
    For a code action offered by an upstream server: its kind and its title as
    a template. Ranking keys upstream actions by this, because computing a
    shape on the request path would be too slow.

Placeholders: ``$1``, ``$2``, ... stand for user identifiers (numbered in
order of first appearance, consistent across message, title, before and
after); ``$S`` for any string literal; ``$N`` for any number literal; ``$H1``,
``$H2``, ... are *holes* introduced by generalisation, each with a class
naming the set of allowlisted names it ranges over.
"""

from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

PATTERN_FORMAT_VERSION = 1
"""Bumped whenever the meaning of a field changes; part of every fingerprint."""


class FixCategory(enum.StrEnum):
    """What kind of change a fix makes."""

    ADD_IMPORT = "add_import"
    REMOVE_IMPORT = "remove_import"
    INSERT_TOKEN = "insert_token"
    DELETE_TOKEN = "delete_token"
    REPLACE_TOKEN = "replace_token"
    DELETE_STATEMENT = "delete_statement"
    WRAP_EXPRESSION = "wrap_expression"
    ADD_GUARD = "add_guard"
    RENAME = "rename"
    ADD_SUPPRESSION = "add_suppression"
    REMOVE_SUPPRESSION = "remove_suppression"
    REWRITE = "rewrite"
    """A replacement of one syntactic unit by another of the same role."""
    OTHER = "other"


class Anchor(enum.StrEnum):
    """Where, in the file's structure, the edit of a fix went.

    Never a line number: a pattern must apply to other files.
    """

    AT_DIAGNOSTIC = "at_diagnostic"
    """The edited unit encloses (or is) the diagnostic's range."""
    IMPORT_BLOCK = "import_block"
    """The module's import block (end of it, or its start if there is none)."""
    FILE_START = "file_start"
    FILE_END = "file_end"
    BEFORE_STATEMENT = "before_statement"
    """A new statement right before the statement holding the diagnostic."""
    AFTER_STATEMENT = "after_statement"
    FUNCTION_START = "function_start"
    """The start of the body of the function enclosing the diagnostic."""
    ENCLOSING_UNIT = "enclosing_unit"
    """An enclosing unit (block, function, class) larger than one statement."""


class Origin(enum.StrEnum):
    """Where a candidate fix comes from."""

    UPSTREAM = "upstream"
    """A code action offered by an upstream server."""
    LEARNED = "learned"
    """A fix fixlore learned (from a manual fix or an accepted action)."""
    BASE = "base"
    """Shipped base knowledge."""


class Scope(enum.StrEnum):
    """Which knowledge scope a record lives in. Workspace > user > base."""

    WORKSPACE = "workspace"
    USER = "user"
    TEAM = "team"  # team knowledge pulled from PostgreSQL (knowledge/_team.py)
    BASE = "base"


@dataclass(frozen=True, slots=True)
class Signature:
    """An abstract diagnostic: what it is, never where or in whose code."""

    language: str
    """LSP language id, e.g. ``python``, ``javascript``, ``typescriptreact``."""
    source: str
    """The reporting tool, e.g. ``Ruff``, ``basedpyright``, ``fixlore``."""
    code: str
    """The rule code as a string (``F401``, ``reportUndefinedVariable``); ``""`` if none."""
    message: str
    """The message as a template with placeholders (``Undefined name `$1```)."""

    @property
    def rule_key(self) -> tuple[str, str, str]:
        """The coarse key the knowledge index groups patterns by."""
        return (self.language, self.source, self.code)


@dataclass(frozen=True, slots=True)
class EditShape:
    """What a fix does, as abstract token text of the unit(s) it changed."""

    anchor: Anchor
    unit: str
    """Node kind of the changed unit (``Comparison``, ``ImportFrom``, ``if_statement``)."""
    before: str
    """Abstract text of the unit before the fix (``""`` for a pure insertion)."""
    after: str
    """Abstract text of the unit after the fix (``""`` for a pure deletion)."""


@dataclass(frozen=True, slots=True)
class ActionTemplate:
    """An upstream code action, abstracted: its kind and templated title."""

    kind: str
    """The LSP code-action kind (``quickfix``, ``source.fixAll.ruff``); ``""`` if none."""
    title: str
    """The title as a template with the signature's placeholders."""


@dataclass(frozen=True, slots=True)
class Hole:
    """A generalised placeholder and the class of names it may take."""

    name: str
    """``$H1``, ``$H2``, ..."""
    klass: str
    """Name of an allowlist class, e.g. ``python.stdlib_module``, ``python.builtin``."""


SPANS_DIAGNOSTIC = ("unit", "diagnostic")
"""``Pattern.extra`` mark: the code the fix replaced was exactly the diagnostic's range.

``int`` -> ``Optional[float]`` learned where the diagnostic pointed at ``int``
applies where a diagnostic points at a whole annotation, not inside a larger
one (``List[int]``): instantiation then takes only code that covers the new
diagnostic's range."""


@dataclass(frozen=True, slots=True)
class Pattern:
    """One abstract fix for one abstract diagnostic.

    A learned fix has a ``shape`` and no ``action``; an upstream action has an
    ``action`` and usually no ``shape``. Counts and provenance live in the
    knowledge store, not here: a pattern is identity plus shape.
    """

    signature: Signature
    category: FixCategory
    shape: EditShape | None = None
    action: ActionTemplate | None = None
    context: tuple[str, ...] = ()
    """Kinds of the nodes enclosing the diagnostic, outermost first."""
    holes: tuple[Hole, ...] = ()
    instances: int = 1
    """How many concrete fixes were merged into this pattern by generalisation."""
    version: int = PATTERN_FORMAT_VERSION
    extra: tuple[tuple[str, str], ...] = field(default=())
    """Room for abstraction-specific, privacy-verified extra fields (sorted pairs)."""

    @property
    def origin(self) -> Origin:
        """Upstream action or learned fix, by which half is filled in."""
        return Origin.UPSTREAM if self.action is not None else Origin.LEARNED

    def identity(self) -> dict[str, Any]:
        """The fields that make a pattern *this* pattern (fingerprint input).

        ``context`` and ``instances`` are deliberately left out: the same fix
        seen in another context is the same fix with different evidence.
        """
        return {
            "v": self.version,
            "signature": _signature_dict(self.signature),
            "category": self.category.value,
            "shape": _shape_dict(self.shape),
            "action": _action_dict(self.action),
            "holes": [[h.name, h.klass] for h in self.holes],
        }

    @property
    def fingerprint(self) -> str:
        """A stable id: 20 hex digits of SHA-256 over the canonical identity (worked out once)."""
        return _fingerprint(self)

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON-ready form (stored, exported, privacy-verified)."""
        out = self.identity()
        out["context"] = list(self.context)
        out["instances"] = self.instances
        out["extra"] = [list(p) for p in self.extra]
        return out

    def to_json(self) -> str:
        """Canonical JSON text (sorted keys, no whitespace)."""
        return canonical_json(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Pattern:
        """Rebuild a pattern from :meth:`to_dict` output.

        Raises ``KeyError``/``ValueError``/``TypeError`` on malformed input; the
        knowledge layer validates imports against the JSON schema first.
        """
        sig = data["signature"]
        shape = data.get("shape")
        action = data.get("action")
        return cls(
            signature=Signature(
                language=str(sig["language"]),
                source=str(sig["source"]),
                code=str(sig["code"]),
                message=str(sig["message"]),
            ),
            category=FixCategory(data["category"]),
            shape=None
            if shape is None
            else EditShape(
                anchor=Anchor(shape["anchor"]),
                unit=str(shape["unit"]),
                before=str(shape["before"]),
                after=str(shape["after"]),
            ),
            action=None if action is None else ActionTemplate(kind=str(action["kind"]), title=str(action["title"])),
            context=tuple(str(c) for c in data.get("context", ())),
            holes=tuple(Hole(name=str(h[0]), klass=str(h[1])) for h in data.get("holes", ())),
            instances=int(data.get("instances", 1)),
            version=int(data.get("v", PATTERN_FORMAT_VERSION)),
            extra=tuple((str(k), str(v)) for k, v in data.get("extra", ())),
        )

    @classmethod
    def from_json(cls, text: str) -> Pattern:
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(text))


def canonical_json(data: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@lru_cache(maxsize=16384)
def _fingerprint(pattern: Pattern) -> str:
    # Per equal pattern: ranking asks for the fingerprints of the same actions on every request.
    return fingerprint_of(pattern.identity())


def fingerprint_of(identity: dict[str, Any]) -> str:
    """Fingerprint of an identity dict (see :meth:`Pattern.identity`)."""
    return hashlib.sha256(canonical_json(identity).encode("utf-8")).hexdigest()[:20]


def _signature_dict(sig: Signature) -> dict[str, str]:
    return {
        "language": sig.language,
        "source": sig.source,
        "code": sig.code,
        "message": sig.message,
    }


def _shape_dict(shape: EditShape | None) -> dict[str, str] | None:
    if shape is None:
        return None
    return {
        "anchor": shape.anchor.value,
        "unit": shape.unit,
        "before": shape.before,
        "after": shape.after,
    }


def _action_dict(action: ActionTemplate | None) -> dict[str, str] | None:
    if action is None:
        return None
    return {"kind": action.kind, "title": action.title}
