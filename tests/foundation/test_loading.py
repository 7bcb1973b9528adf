"""What ``fixlore serve`` loads on its loading thread while the early front relays (issue 14, "no stall after start").

Taking in the relayed ``didOpen`` and opening the knowledge store used to
import the store's modules and load the documents' learning tables on threads
at the hand-over, and the first lightbulbs after it waited for the GIL. The
loading thread now does that before it says the server is loaded.
"""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from fixlore.lsp.tools import cli
from fixlore.lsp.transport.handover import Loading


def _loading(prepare):  # type: ignore[no-untyped-def]
    steps: list[object] = []
    built = object()
    front = SimpleNamespace(first=None, answer=None)
    loading = Loading(lambda: steps.append("preload"), lambda: steps.append("build") or built, front, prepare)
    loading.documents = lambda: [("python", "file:///w/a.py"), ("plaintext", "file:///w/notes.txt")]
    return loading, steps, built


def test_the_documents_opened_meanwhile_are_prepared_before_the_server_is_handed_over() -> None:
    prepared: list[object] = []
    loading, steps, built = _loading(prepared.append)
    assert loading.server() is built
    assert steps == ["preload", "build"]
    assert prepared == [[("python", "file:///w/a.py"), ("plaintext", "file:///w/notes.txt")]]


def test_a_failing_preparation_costs_only_its_head_start(caplog: pytest.LogCaptureFixture) -> None:
    def fail(documents: object) -> None:
        raise OSError("disk gone")

    loading, _, built = _loading(fail)
    assert loading.server() is built
    assert "preparing the opened documents' tables failed" in caplog.text


def test_only_the_languages_fixlore_learns_in_get_their_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded: list[str] = []
    monkeypatch.setattr("fixlore.abstraction.load_tables", loaded.append)
    cli._load_tables([("python", "file:///a.py"), ("plaintext", "file:///b.txt"), ("python", "file:///c.py")])
    assert loaded == ["python"]


@pytest.mark.parametrize("learning", [True, False])
def test_the_knowledge_store_modules_are_loaded_ahead_only_when_learning(learning: bool) -> None:
    code = (
        "import sys\nfrom fixlore.lsp.tools.cli import _load_server\n"
        f"_load_server(learning={learning})\nprint('fixlore.knowledge._knowledge' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == str(learning)
