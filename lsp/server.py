"""The server factory: every part of fixlore, each built with what it uses.

``create_server(options)`` builds a fresh :class:`FixloreServer` (no module-level
singleton, so each test gets its own) and reads as the wiring diagram; see
docs/ARCHITECTURE.md for the picture and the flows.
"""

from __future__ import annotations

from fixlore.lsp.transport import logs
from fixlore.lsp.transport.language_server import CannotListen, FixloreServer, ServerOptions


def create_server(options: ServerOptions | None = None) -> FixloreServer:
    """A new server and every part of fixlore, each built with what it uses: the wiring diagram.

    Who reacts to an event of the session, and in which order, is written in
    :class:`~fixlore.lsp.dispatch.Dispatch`; the handler modules only register
    pygls features that call the parts given here.
    """
    from fixlore.lsp import documents, lifecycle, proxy
    from fixlore.lsp.actions import code_actions, commands
    from fixlore.lsp.actions.code_actions import CodeActions
    from fixlore.lsp.actions.formatting import resolves_edits
    from fixlore.lsp.dispatch import Dispatch
    from fixlore.lsp.hub import DiagnosticsHub, SyntaxChecker
    from fixlore.lsp.in_flight import InFlight
    from fixlore.lsp.learning.loop import LearningLoop
    from fixlore.lsp.lifecycle import Lifecycle
    from fixlore.lsp.proxy import Proxy

    options = options or ServerOptions()
    server = FixloreServer(options)
    life = Lifecycle(server, options.cli_settings)
    hub = DiagnosticsHub(server)
    in_flight = InFlight()  # the code actions being answered: what nobody waits for steps aside
    checker = SyntaxChecker(server, hub, server.thread_pool, in_flight)
    upstreams = Proxy(server, hub, in_flight)
    learning = LearningLoop(server, hub, syntax=checker.problems_in_background, in_flight=in_flight)
    actions = CodeActions(
        server,
        upstreams,
        learning,
        learning.store,
        in_flight,
        resolves_edits=lambda: resolves_edits(server.client_capabilities),
    )
    dispatch = Dispatch(server, life, hub, checker, upstreams, learning)
    # The three links that close a loop, each set once, here:
    hub.follower = dispatch  # every merged publish: the proxy's pull answers, then learning
    server.protocol.router = upstreams  # what fixlore forwards without reading
    server.dispatch = dispatch  # the editor's stream ended, or SIGTERM: goodbye

    lifecycle.register(server, life, dispatch)
    documents.register(server, dispatch)
    proxy.register(server, upstreams)
    code_actions.register(server, actions)
    commands.register(server, actions, learning, upstreams, hub)
    logs.connect(server)  # a `fixlore serve` process logs to the editor (window/logMessage), not stderr
    return server


__all__ = ["CannotListen", "FixloreServer", "ServerOptions", "create_server"]
