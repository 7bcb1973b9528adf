"""The benchmarks' scripts (``bench/``) for the tests that check them, and the ruff they run."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"
RUFF = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))


def bench_module(name: str) -> ModuleType:
    """``bench/<name>.py``, loaded as a module (the folder is not a package)."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
