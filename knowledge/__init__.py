"""fixlore's knowledge layer: the pattern store, its scopes, ranking, pruning, export/import.

Never imports pygls or lsprotocol: it speaks in the dataclasses of
``fixlore.abstraction._pattern`` and of :mod:`._model`. See docs/knowledge.md.
"""

from __future__ import annotations

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
