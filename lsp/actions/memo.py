"""The same code-action question asked again is ranked as it was.

An editor asks for a line's code actions again and again as the cursor moves
over it (VS Code's lightbulb, Neovim's ``CursorHold`` plugins): the same
text, the same diagnostics, the upstream's same actions, the same learned
fixes. Assembling the answer (:mod:`.assemble`: each upstream action's
pattern and edits, the learned fixes' ranges, twins, the ranking, the
preferred mark) took ~0.24 ms of every such request, a third of what fixlore
added to ruff's answer. :class:`AssemblyMemo` keeps the last few questions'
:class:`~fixlore.lsp.actions.assemble.Plan` and gives it back when nothing it was made of changed:

- the document: its version and the very text (``is``),
- the request's diagnostics and the upstreams' actions (equal),
- the learned fixes (the very objects: they are made once per version),
- the evidence of each rule asked about: :meth:`Knowledge.stamp` changes after
  every change of its rows, of what imports added, of which keys are in
  memory, and with the fix the user made last — taken before the evidence was
  read, so a change made while the plan was being made is never hidden,
- the minute (the ranking's recency decay is in days, but a plan never
  outlives the minute it was made in).

Only the commands are made anew (:func:`~.assemble._finish`): each answer's
tokens are its own. Memory only; at most :data:`SIZE` plans (a closed document's
last plans go as others take their place).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

    from fixlore.knowledge import Knowledge, RuleKey
    from fixlore.lsp.learning.fixes import LearnedFix

SIZE = 32
"""Plans kept (one per document and diagnostics asked about)."""


@dataclass(eq=False)
class Question:
    """What one code-action answer is made of (besides its tokens)."""

    uri: str
    doc: TextDocument | None
    language: str | None
    diagnostics: list[dict[str, Any]]
    upstream: list[Any]
    learned: list[list[LearnedFix]]
    knowledge: Knowledge | None
    invoked: bool
    now: float

    def __post_init__(self) -> None:
        self.version = self.doc.version if self.doc is not None else None
        self.source = self.doc.source if self.doc is not None else None
        self.minute = int(self.now // 60)
        self.where = _where(self.uri, self.diagnostics)
        """Its place among the plans (see :class:`AssemblyMemo`)."""

    def asks_as(self, earlier: Question) -> bool:
        """Whether this question's answer is ``earlier``'s, evidence aside (see :meth:`AssemblyMemo.get`)."""
        return (
            # A list the user invoked is ranked as the automatic lightbulb is; its plan also says
            # what each candidate makes (the offers it counts), which the lightbulb does not need.
            (self.invoked == earlier.invoked or earlier.invoked)
            and self.version == earlier.version
            and self.source is earlier.source
            and self.language == earlier.language
            and self.knowledge is earlier.knowledge
            and self.minute == earlier.minute
            and len(self.learned) == len(earlier.learned)
            and all(
                len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
                for a, b in zip(self.learned, earlier.learned, strict=True)
            )
            and self.diagnostics == earlier.diagnostics
            and self.upstream == earlier.upstream
        )


class Stamped(Protocol):
    """A plan as the memo sees it (``assemble.Plan``): the stamps of the rules it read the evidence of."""

    stamps: list[tuple[RuleKey, tuple[object, ...]]]
    """Each rule asked about, with its :meth:`~fixlore.knowledge.Knowledge.stamp` taken before its evidence was read."""


P = TypeVar("P", bound=Stamped)


def _where(uri: str, diagnostics: list[dict[str, Any]]) -> tuple[Any, ...]:
    """A plan's place among the others: the document, its diagnostics' codes and starts."""
    at = []
    for diag in diagnostics:
        start = (diag.get("range") or {}).get("start") or {}
        at.append((diag.get("code"), start.get("line"), start.get("character")))
    return (uri, *at)


class AssemblyMemo(Generic[P]):
    """The last :data:`SIZE` plans, by document and diagnostics."""

    def __init__(self, size: int = SIZE) -> None:
        self._size = size
        self._plans: OrderedDict[tuple[Any, ...], tuple[Question, P]] = OrderedDict()
        self.hits = 0
        """Questions answered from a plan (for tests and benchmarks)."""

    def get(self, question: Question) -> P | None:
        """The plan made for the same question, if nothing it was made of has changed since."""
        where = question.where
        found = self._plans.get(where)
        if found is None:
            return None
        earlier, plan = found
        if not question.asks_as(earlier):
            return None
        knowledge = question.knowledge
        if knowledge is not None and any(knowledge.stamp(key) != stamp for key, stamp in plan.stamps):
            return None
        self._plans.move_to_end(where)
        self.hits += 1
        return plan

    def put(self, question: Question, plan: P) -> None:
        """Keep ``plan`` as the answer to ``question`` (the oldest plan goes past :data:`SIZE`)."""
        where = question.where
        self._plans[where] = (question, plan)
        self._plans.move_to_end(where)
        while len(self._plans) > self._size:
            self._plans.popitem(last=False)


__all__ = ["SIZE", "AssemblyMemo", "Question", "Stamped"]
