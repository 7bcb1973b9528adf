"""The upstream proxy: fixlore as a transparent front for the user's language servers.

Configure upstreams per language (several allowed, used in the given order):
``fixlore serve --upstream python='ruff server' --upstream python='basedpyright-langserver --stdio'``,
or ``initializationOptions.fixlore.upstreams`` / the ``fixlore.upstreams``
setting (``{language: [{command, name?, initializationOptions?, settings?}]}``).
The editor's ``initializationOptions`` minus the ``fixlore`` key, and its
``workspace/configuration`` answers, reach each upstream unchanged unless that
upstream's own config overrides them (``initializationOptions`` /
``settings``; ``settings`` answers ``workspace/configuration`` by looking up
each item's dotted section in it).

What happens (details in the modules):

* :mod:`.core` — :class:`Proxy`: starts upstreams inside ``initialize`` with
  the editor's own capabilities, merges their capabilities into fixlore's
  answer, forwards notifications, routes requests (fan-out-and-merge for
  completion and locations, first capable otherwise); ``$/cancelRequest``
  reaches the upstream and late answers are dropped. The proxy is built from
  :mod:`.documents` (document sync, each upstream in its own sync kind) and
  :mod:`.relays` (server-to-client requests — applyEdit, configuration,
  registerCapability, workDoneProgress/create, showMessageRequest, refresh, …
  — relayed to the editor and the answers back) over :mod:`.base`.
* :mod:`.upstream` — one child: back-off restart (gives up after 5 crashes
  in 3 minutes, telling the user once), per-request timeout, one clear message
  if the command is missing, every child stopped on shutdown/exit.
* :mod:`.diagnostics` — push/pull translation (see its docstring).
* :mod:`.capabilities`, :mod:`.merge` — capability union, answer merging, and
  the ``data`` wrapper that records which upstream made an item.

Position encoding: upstreams are offered exactly the encoding pygls chose
with the editor (e.g. UTF-8 for Neovim). If any upstream answers another one,
the whole session falls back to UTF-16 (which every server must support):
fixlore's workspace codec switches, the upstreams that took the first offer
are restarted with UTF-16, and fixlore advertises UTF-16. One encoding end to
end, so positions are forwarded untouched.

Integration API for the code-action / learning layer
----------------------------------------------------
``create_server`` builds one :class:`Proxy` (``Proxy(server, hub)``), makes it
the protocol's router and hands it to the parts that use it:

* ``await proxy.start_code_actions(raw_params).answers() -> list[tuple[UpstreamId, dict]]``
  — fan-out to the document's upstreams (requests written at once; timeout and
  try/except per upstream), in upstream order. Each action's ``data`` is already wrapped as
  ``{"fixlore": {"upstream": id}, "data": original}`` (no inner ``data`` if
  the upstream had none), so return them to the editor as they are.
* ``await proxy.resolve_code_action(raw_action) -> dict`` — unwraps, sends the
  upstream's original action to the upstream that made it, and wraps the
  answer again. ``fixlore.lsp.proxy.merge.origin(action)`` tells the origin.
* ``await proxy.execute_command(command, arguments)`` — runs an upstream's
  command with the upstream that offers it; ``fixlore.*`` commands are never
  forwarded (JsonRpcInvalidParams).
* ``proxy.upstreams_for(uri)``.

``textDocument/codeAction`` and ``codeAction/resolve`` are handled by
``fixlore.lsp.actions.code_actions.CodeActions``, which calls the API above; the
proxy registers no pygls feature for them. pygls' capabilities for that
handler are merged with the upstreams' (kinds, ``resolveProvider`` united).

``workspace/executeCommand`` is pygls' built-in: commands registered with
``@server.command(...)`` (the ``fixlore.*`` ones) run as usual; any other
command goes to ``proxy.execute_command`` (the protocol calls its router).
``executeCommandProvider.commands`` is the union of fixlore's and the
upstreams' commands.

Notebooks (``notebookDocument/*``) go raw to the upstreams whose
``notebookDocumentSync`` selector names their cells' language; pygls keeps
the notebook and its cells (as text documents) for fixlore.

Not forwarded (documented limitations): work-done
progress tokens are passed through unchanged (two upstreams could in theory
pick the same token); upstreams added by a configuration change after
``initialize`` serve only the capabilities already advertised.
"""

from __future__ import annotations

import atexit
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from fixlore.lsp.proxy.core import Proxy
from fixlore.lsp.proxy.merge import origin, unwrap
from fixlore.lsp.proxy.upstream import Upstream, UpstreamId
from fixlore.lsp.transport.protocol import current_raw_params

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

logger = logging.getLogger(__name__)


def register(server: LanguageServer, proxy: Proxy) -> None:
    """Forward what pygls handles itself; no upstream outlives the interpreter."""
    atexit.register(proxy.kill_all)

    # pygls handles these itself; fixlore's handler runs after it and forwards.
    def forward(method: str) -> Any:
        def handler(params: Any) -> None:
            proxy.broadcast(method, current_raw_params())

        return handler

    for method in (
        types.SET_TRACE,
        types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS,
        types.WINDOW_WORK_DONE_PROGRESS_CANCEL,
    ):
        if method not in server.protocol.fm.features:
            server.feature(method)(forward(method))


__all__ = ["Proxy", "Upstream", "UpstreamId", "origin", "register", "unwrap"]
