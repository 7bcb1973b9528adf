"""`teamKnowledge`: the same schema and precedence as every other key, plus FIXLORE_TEAM_KNOWLEDGE below them all."""

from __future__ import annotations

from typing import Any

import pytest

from fixlore.lsp.config import env_layer, merge_layers, parse_config

ENV = {"FIXLORE_TEAM_KNOWLEDGE": "host=env dbname=t"}


@pytest.mark.parametrize(
    ("env", "pyproject", "workspace", "init", "cli", "expected"),
    [
        ({}, {}, {}, {}, {}, ""),
        (ENV, {}, {}, {}, {}, "host=env dbname=t"),
        (ENV, {"teamKnowledge": "fixlore-team"}, {}, {}, {}, "service=fixlore-team"),
        (ENV, {"teamKnowledge": "a"}, {"teamKnowledge": "host=ws"}, {}, {}, "host=ws"),
        (ENV, {}, {"teamKnowledge": "host=ws"}, {"team_knowledge": "host=init"}, {}, "host=init"),
        (ENV, {}, {}, {"teamKnowledge": "host=init"}, {"teamKnowledge": "postgresql://cli/t"}, "postgresql://cli/t"),
    ],
)
def test_team_knowledge_precedence(
    env: dict[str, str], pyproject: dict, workspace: dict, init: dict, cli: dict, expected: str
) -> None:
    config, problems = parse_config(merge_layers(env_layer(env), pyproject, workspace, init, cli))
    assert problems == []
    assert config.team_knowledge == expected


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("host=db password=hunter2", "password"),
        ("postgresql://me:hunter2@db/t", "password"),
        (42, "expected a connection string"),
        ("not a service!", "expected a connection string"),
    ],
)
def test_a_bad_team_knowledge_value_keeps_the_default_and_says_why(value: Any, fragment: str) -> None:
    config, problems = parse_config({"teamKnowledge": value})
    assert config.team_knowledge == ""
    assert len(problems) == 1 and "`teamKnowledge`" in problems[0] and fragment in problems[0]
    assert "hunter2" not in problems[0]


def test_the_environment_variable_alone() -> None:
    assert env_layer({}) == {} and env_layer({"FIXLORE_TEAM_KNOWLEDGE": "  "}) == {}
    assert env_layer(ENV) == {"teamKnowledge": "host=env dbname=t"}


def test_the_trust_thresholds_are_settings() -> None:
    config, problems = parse_config(merge_layers({"teamMinWorkspaces": 5}, {"team_min_approvals": 1}))
    assert problems == [] and (config.team_min_workspaces, config.team_min_approvals) == (5, 1)
    assert (parse_config({})[0].team_min_workspaces, parse_config({})[0].team_min_approvals) == (3, 2)
    for bad in (0, 1001, 2.5, "3", True):
        config, problems = parse_config({"teamMinWorkspaces": bad, "teamMinApprovals": bad})
        assert (config.team_min_workspaces, config.team_min_approvals) == (3, 2)
        assert len(problems) == 2 and all("from 1 to 1000" in p for p in problems)
