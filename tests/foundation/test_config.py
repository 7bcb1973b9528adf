"""The configuration schema and its one precedence order, as a table."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixlore.lsp.config import (
    FixloreConfig,
    UpstreamConfig,
    merge_layers,
    parse_config,
    parse_upstream_flag,
    read_pyproject,
    split_init_options,
    upstream_ids,
)

# (pyproject, workspace/configuration, initializationOptions, CLI) -> expected learning, pause
PRECEDENCE = [
    ({}, {}, {}, {}, True, 2000),
    ({"learning": False}, {}, {}, {}, False, 2000),
    ({"learning": False}, {"learning": True}, {}, {}, True, 2000),
    ({}, {"learning": True}, {"learning": False}, {}, False, 2000),
    ({}, {}, {"learning": True}, {"learning": False}, False, 2000),
    ({"manualFixPauseMs": 10}, {"manualFixPauseMs": 20}, {}, {}, True, 20),
    ({"manualFixPauseMs": 10}, {"manualFixPauseMs": 20}, {"manual_fix_pause_ms": 30}, {}, True, 30),
    ({"manualFixPauseMs": 10}, {}, {}, {"manualFixPauseMs": 40}, True, 40),
]


@pytest.mark.parametrize(("pyproject", "workspace", "init", "cli", "learning", "pause"), PRECEDENCE)
def test_precedence_defaults_pyproject_workspace_init_cli(
    pyproject: dict, workspace: dict, init: dict, cli: dict, learning: bool, pause: int
) -> None:
    config, problems = parse_config(merge_layers(pyproject, workspace, init, cli))

    assert problems == []
    assert config.learning is learning
    assert config.manual_fix_pause_ms == pause


def test_upstreams_merge_per_language() -> None:
    merged = merge_layers(
        {"upstreams": {"python": ["pyright-langserver --stdio"], "go": ["gopls"]}},
        {"upstreams": {"python": [{"command": ["ruff", "server"], "name": "ruff"}]}},
    )
    config, problems = parse_config(merged)

    assert problems == []
    assert config.upstreams["go"] == (UpstreamConfig(command=("gopls",)),)
    assert config.upstreams["python"] == (UpstreamConfig(command=("ruff", "server"), name="ruff"),)


@pytest.mark.parametrize(
    ("raw", "problem_fragment"),
    [
        ({"learning": "yes"}, "`learning`: expected true or false"),
        ({"logLevel": "loud"}, "`logLevel`: expected one of"),
        ({"manualFixPauseMs": -5}, "`manualFixPauseMs`"),
        ({"upstreams": {"python": [{"command": []}]}}, "needs a non-empty `command`"),
        ({"upstreams": "ruff"}, "expected an object"),
        ({"colour": "blue"}, "unknown setting `colour`"),
    ],
)
def test_invalid_settings_fall_back_to_defaults_with_a_readable_problem(raw: dict, problem_fragment: str) -> None:
    config, problems = parse_config(raw)

    assert config == FixloreConfig()
    assert len(problems) == 1 and problem_fragment in problems[0]


def test_one_bad_setting_does_not_discard_the_good_ones() -> None:
    config, problems = parse_config({"learning": False, "logLevel": 3})

    assert config.learning is False
    assert config.log_level == "info"
    assert len(problems) == 1


def test_cli_upstream_flag() -> None:
    assert parse_upstream_flag("python=ruff server --preview") == (
        "python",
        {"command": ["ruff", "server", "--preview"]},
    )
    with pytest.raises(ValueError, match="LANGUAGE='COMMAND"):
        parse_upstream_flag("ruff server")


def test_init_options_split_keeps_the_editors_options_for_upstreams() -> None:
    ours, rest = split_init_options({"fixlore": {"learning": False}, "settings": {"lineLength": 100}})

    assert ours == {"learning": False}
    assert rest == {"settings": {"lineLength": 100}}


def test_pyproject_table_is_read_and_broken_toml_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fixlore]\nlearning = false\n")
    assert read_pyproject(tmp_path) == {"learning": False}

    (tmp_path / "pyproject.toml").write_text("[tool.fixlore\nlearning = ")
    assert read_pyproject(tmp_path) == {}


# --- live reconfiguration through the server (lifecycle) ---------------------------------


class _FakeNotify:
    """Stands in for the server object only where Lifecycle reports problems."""

    def __init__(self) -> None:
        from fixlore.lsp.config import FixloreConfig

        self.config = FixloreConfig()
        self.shown: list[str] = []

    def notify_user(self, message: str, *, key: str) -> None:
        self.shown.append(message)


def _lifecycle():  # type: ignore[no-untyped-def]
    from fixlore.lsp.lifecycle import Lifecycle

    server = _FakeNotify()
    return server, Lifecycle(server)  # type: ignore[arg-type]


def test_start_up_workspace_answer_ranks_below_initialization_options() -> None:
    server, life = _lifecycle()
    life.layers["init"] = {"learning": False}

    life.set_workspace_layer({"learning": True})

    assert server.config.learning is False


def test_a_live_change_wins_over_the_value_sent_at_start() -> None:
    server, life = _lifecycle()
    life.layers["init"] = {"learning": False, "logLevel": "debug"}
    life.set_workspace_layer({"learning": False})
    life.settle()

    life.set_workspace_layer({"learning": True})

    assert server.config.learning is True
    assert server.config.log_level == "debug"  # untouched keys keep their start-up value


def test_a_live_push_that_repeats_a_value_changes_nothing_else() -> None:
    server, life = _lifecycle()
    life.layers["init"] = {"manualFixPauseMs": 500}
    life.set_workspace_layer({"manualFixPauseMs": 9000, "learning": True})
    life.settle()

    life.set_workspace_layer({"manualFixPauseMs": 9000, "learning": False})

    assert server.config.manual_fix_pause_ms == 500
    assert server.config.learning is False


def test_invalid_live_setting_is_reported_once_and_defaults_are_kept() -> None:
    server, life = _lifecycle()
    life.settle()

    life.set_workspace_layer({"diagnosticsDebounceMs": "soon"})
    life.set_workspace_layer({"diagnosticsDebounceMs": "soon"})

    assert server.config.diagnostics_debounce_ms == 250
    assert len(server.shown) == 1 and "diagnosticsDebounceMs" in server.shown[0]


def test_every_workspace_folder_is_kept_and_follows_the_editors_changes(tmp_path: Path) -> None:
    from lsprotocol import types

    _, life = _lifecycle()
    a, b, c = (tmp_path / n for n in "abc")
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=a.as_uri(),
        workspace_folders=[types.WorkspaceFolder(a.as_uri(), "a"), types.WorkspaceFolder(b.as_uri(), "b")],
    )
    life.take_initialize(params, {})
    assert (life.root, life.folders) == (a, [a, b])
    event = {"added": [{"uri": c.as_uri(), "name": "c"}, {"uri": "untitled:x"}], "removed": [{"uri": a.as_uri()}]}
    assert life.change_folders({"event": event}) == [c]
    assert life.folders == [b, c]
    assert life.change_folders({"event": {"added": [{"uri": b.as_uri()}]}}) == []  # known already
    assert life.change_folders({"bogus": 1}) == [] and life.folders == [b, c]

    _, alone = _lifecycle()
    alone.take_initialize(types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=a.as_uri()), {})
    assert alone.folders == [a]  # an editor that names no folders: the root


def test_lsp_edits_convert_from_utf16_columns_to_code_points() -> None:
    from fixlore.abstraction import apply_edits
    from fixlore.lsp.hub import from_lsp_edits

    text = 'x = "😋"; y = 1\n'
    after_emoji = len('x = "😋"; '.encode("utf-16-le")) // 2  # 10 UTF-16 units, 9 code points
    edit = {"range": {"start": {"line": 0, "character": after_emoji}, "end": {"line": 0, "character": after_emoji + 1}}}

    result = apply_edits(
        text, from_lsp_edits(text, [{**edit, "newText": "z"}], lambda s: len(s.encode("utf-16-le")) // 2)
    )

    assert result == 'x = "😋"; z = 1\n'


def test_upstream_ids_are_stable_and_distinct() -> None:
    ruff = UpstreamConfig(command=("ruff", "server"))
    ids = [uid for uid, _, _ in upstream_ids({"python": (ruff, ruff), "rust": (UpstreamConfig(("ra",)),)})]
    assert ids == ["python:ruff", "python:ruff#2", "rust:ra"]
