"""fixlore's knowledge layer: the pattern store, its scopes, ranking, pruning, export/import.

Never imports pygls or lsprotocol: it speaks in the dataclasses of
:mod:`fixlore.abstraction` (``Pattern``, ``Signature``, ``Scope``) and of
:mod:`._model`. See docs/knowledge.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._admin import PatternDetail
    from ._exchange import FORMAT, FORMAT_VERSION, Record
    from ._knowledge import Knowledge
    from ._model import (
        Candidate,
        Counts,
        Event,
        EventKind,
        ExportFilters,
        ImportReport,
        InvalidImport,
        KnowledgeError,
        KnowledgeStats,
        PatternStats,
        PruneConfig,
        PruneReport,
        RankedAction,
        RankingConfig,
        RuleKey,
    )
    from ._paths import knowledge_home, workspace_file
    from ._ranking import prior_score, rank_actions
    from ._team import SyncReport, TeamPattern, TeamRead, TeamSync, TrustConfig, check_team
    from ._teamdb import TeamError, team_conninfo

# Loaded when first used (PEP 562): the server answers `initialize` before it
# needs the store, export or team modules, and `from fixlore.knowledge import
# EventKind` should not load them all.
_WHERE = {
    "PatternDetail": "_admin",
    **dict.fromkeys(("FORMAT", "FORMAT_VERSION", "Record"), "_exchange"),
    "Knowledge": "_knowledge",
    **dict.fromkeys(
        (
            "Candidate",
            "Counts",
            "Event",
            "EventKind",
            "ExportFilters",
            "ImportReport",
            "InvalidImport",
            "KnowledgeError",
            "KnowledgeStats",
            "PatternStats",
            "PruneConfig",
            "PruneReport",
            "RankedAction",
            "RankingConfig",
            "RuleKey",
        ),
        "_model",
    ),
    **dict.fromkeys(("knowledge_home", "workspace_file"), "_paths"),
    **dict.fromkeys(("prior_score", "rank_actions"), "_ranking"),
    **dict.fromkeys(("SyncReport", "TeamPattern", "TeamRead", "TeamSync", "TrustConfig", "check_team"), "_team"),
    **dict.fromkeys(("TeamError", "team_conninfo"), "_teamdb"),
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Candidate",
    "Counts",
    "Event",
    "EventKind",
    "ExportFilters",
    "ImportReport",
    "InvalidImport",
    "Knowledge",
    "KnowledgeError",
    "KnowledgeStats",
    "PatternDetail",
    "PatternStats",
    "PruneConfig",
    "PruneReport",
    "RankedAction",
    "RankingConfig",
    "Record",
    "RuleKey",
    "SyncReport",
    "TeamError",
    "TeamPattern",
    "TeamRead",
    "TeamSync",
    "TrustConfig",
    "knowledge_home",
    "prior_score",
    "check_team",
    "rank_actions",
    "team_conninfo",
    "workspace_file",
]
