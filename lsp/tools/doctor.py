"""``fixlore doctor``: what is installed, where knowledge lives, what is missing.

Exit code 0 when everything needed is there, 1 otherwise (a missing grammar,
an upstream command not on PATH, an incompatible pinned dependency).
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from fixlore.abstraction.languages import get_language, grammar_versions, language_for, supported_languages
from fixlore.lsp import __version__
from fixlore.lsp.config import env_layer, merge_layers, parse_config, read_pyproject

_DISTS = ("pygls", "lsprotocol", "cattrs", "libcst", "tree-sitter", "platformdirs")

LANGUAGE_IDS = frozenset(
    """abap bat bibtex clojure coffeescript c cpp csharp css d delphi diff dart dockerfile elixir erlang fsharp
    git-commit git-rebase go groovy handlebars haml haskell html ini java javascript javascriptreact json jsonc
    latex less lua makefile markdown objective-c objective-cpp pascal perl perl6 php powershell jade pug python r
    razor ruby rust scss sass scala shaderlab shellscript sql swift typescript typescriptreact tex vb xml xsl yaml
    kotlin toml zig nix vue svelte terraform ocaml julia elm proto graphql cmake""".split()
)
"""Language ids editors send: the LSP specification's table and a few more in common use."""

KNOWN_SERVERS: tuple[tuple[str, str, str], ...] = (
    ("python", "ruff", "ruff server"),
    ("python", "basedpyright-langserver", "basedpyright-langserver --stdio"),
    ("python", "pyright-langserver", "pyright-langserver --stdio"),
    ("python", "pylsp", "pylsp"),
    ("typescript", "typescript-language-server", "typescript-language-server --stdio"),
    ("go", "gopls", "gopls"),
    ("rust", "rust-analyzer", "rust-analyzer"),
    ("c", "clangd", "clangd"),
    ("java", "jdtls", "jdtls"),
    ("shellscript", "bash-language-server", "bash-language-server start"),
)
"""(language, executable, command) of language servers fixlore can front, looked for on PATH."""


def knowledge_location() -> Path:
    """Where the user's knowledge store lives."""
    try:
        from fixlore.knowledge import knowledge_home
    except ImportError:
        from platformdirs import user_data_dir

        env = os.environ.get("FIXLORE_HOME")
        return Path(env) if env else Path(user_data_dir("fixlore", appauthor=False))
    return Path(knowledge_home())


def run_doctor(cli_settings: dict[str, Any], out: Any = print, cwd: Path | None = None) -> int:
    """Print the report; return 0 if all is well, 1 if something needed is missing."""
    problems: list[str] = []
    out(f"fixlore {__version__} on Python {platform.python_version()} ({sys.executable})")
    for dist in _DISTS:
        try:
            out(f"  {dist:<14} {version(dist)}")
        except PackageNotFoundError:
            out(f"  {dist:<14} MISSING")
            problems.append(f"{dist} is not installed")
    try:
        major = int(version("cattrs").split(".")[0])
        if major >= 25:
            problems.append("cattrs >= 25 breaks pygls 2.1 on some servers' messages; install cattrs<25")
    except (PackageNotFoundError, ValueError):
        pass

    home = knowledge_location()
    out(f"\nKnowledge: {home}{'' if home.exists() else ' (not created yet)'}")
    if os.environ.get("FIXLORE_HOME"):
        out("  (set by FIXLORE_HOME)")

    out("\nGrammars:")
    for dist, ver in grammar_versions().items():
        out(f"  {dist:<24} {ver}")
    for language in sorted(supported_languages()):
        if get_language(language) is None:
            problems.append(f"no grammar for {language}")

    root = cwd or Path.cwd()
    merged = merge_layers(env_layer(), read_pyproject(root), cli_settings)
    config, config_problems = parse_config(merged)
    problems.extend(f"configuration: {p}" for p in config_problems)
    out("\nUpstream servers:")
    if not config.upstreams:
        out("  none configured (fixlore runs standalone: syntax diagnostics and learned fixes)")
    for language, servers in sorted(config.upstreams.items()):
        if language not in LANGUAGE_IDS and language_for(language, "") is None:
            problems.append(
                f"upstream for `{language}`: `{language}` is not a language id editors send"
                " (e.g. python, typescript, go), so no document would reach it"
            )
        for upstream in servers:
            found = shutil.which(upstream.command[0])
            out(f"  {language:<12} {' '.join(upstream.command):<40} {found or 'NOT FOUND on PATH'}")
            if not found:
                problems.append(f"upstream `{upstream.command[0]}` for {language} is not on PATH")

    from fixlore.lsp.actions.formatting import formatter_command

    formatters = {language: formatter_command(config, language) for language in sorted(config.upstreams)}
    out("\nFormatted fixes (formatFixes):")
    if not config.format_fixes:
        out("  off")
    elif not any(formatters.values()):
        out("  none: no upstream formats (ruff for Python, Biome): quick fixes keep the layout the fix makes")
    for language, formatter in formatters.items():
        if formatter is not None:
            out(f"  {language:<12} {' '.join(formatter)}, where the code a quick fix touches is formatted")

    out("\nTeam knowledge:")
    if not config.team_knowledge:
        out("  not configured (teamKnowledge, or FIXLORE_TEAM_KNOWLEDGE)")
    else:
        from fixlore.knowledge import check_team

        ok, detail = check_team(config.team_knowledge)
        out(f"  {config.team_knowledge}: {detail}")
        if not ok:
            problems.append(f"team knowledge: {detail}")

    out("\nLanguage servers on PATH:")
    found_any = False
    for language, executable, command in KNOWN_SERVERS:
        path = shutil.which(executable)
        if path:
            found_any = True
            out(f"  {language:<12} {executable}  {path}  (--upstream {language}='{command}')")
    if not found_any:
        out("  none of " + ", ".join(executable for _, executable, _ in KNOWN_SERVERS))

    if problems:
        out("\nProblems:")
        for problem in problems:
            out(f"  - {problem}")
        return 1
    out("\nAll good.")
    return 0
