"""What fixlore relies on of pygls still holds: each overridden method, its parameters, each private attribute.

When pygls changes (a new version, the pin lifted), these fail naming the
method or attribute that moved, instead of the server failing in an editor.
The lists are in ``fixlore.lsp.transport.pygls_adapter``; the test also fails
when fixlore overrides a pygls method the lists do not name.
"""

from __future__ import annotations

import inspect
from importlib.metadata import version
from typing import Any

from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import Workspace

from fixlore.lsp.server import create_server
from fixlore.lsp.transport.language_server import FixloreServer
from fixlore.lsp.transport.pygls_adapter import PYGLS_OVERRIDES, PYGLS_PRIVATE, FixloreProtocol

PYGLS = f"pygls {version('pygls')}"
BASES: dict[str, tuple[type[Any], type[Any]]] = {
    "LanguageServerProtocol": (LanguageServerProtocol, FixloreProtocol),
    "LanguageServer": (LanguageServer, FixloreServer),
}


def _parameters(function: Any) -> tuple[str, ...]:
    return tuple(inspect.signature(function).parameters)


def override_problems(overrides: dict[str, dict[str, tuple[str, ...]]]) -> list[str]:
    """What no longer holds of ``overrides`` (as :data:`PYGLS_OVERRIDES`) in the installed pygls."""
    problems: list[str] = []
    for name, methods in overrides.items():
        base, ours = BASES[name]
        for method, expected in methods.items():
            theirs = getattr(base, method, None)
            if theirs is None:
                problems.append(f"{PYGLS}: {name}.{method} is gone ({ours.__name__} overrides it)")
            elif _parameters(theirs) != expected:
                problems.append(f"{PYGLS}: {name}.{method}{_parameters(theirs)}, fixlore expects {expected}")
            if method not in vars(ours):
                problems.append(f"{ours.__name__} no longer overrides {method}: drop it from PYGLS_OVERRIDES")
    return problems


def missing_private(private: dict[str, tuple[str, ...]]) -> list[str]:
    """The attributes of ``private`` (as :data:`PYGLS_PRIVATE`) a fresh pygls instance lacks."""
    server = create_server()
    instances: dict[str, Any] = {
        "LanguageServerProtocol": server.protocol,
        "LanguageServer": server,
        "Workspace": Workspace(None),
    }
    return [
        f"{PYGLS}: a fresh {name} has no {attr}"
        for name, attrs in private.items()
        for attr in attrs
        if not hasattr(instances[name], attr)
    ]


def test_every_overridden_method_is_still_pyglss_with_the_parameters_relied_on() -> None:
    assert override_problems(PYGLS_OVERRIDES) == []


def test_every_override_of_pygls_is_listed() -> None:
    unlisted = [
        f"{ours.__name__}.{attr} overrides {name}.{attr} but PYGLS_OVERRIDES does not list it"
        for name, (base, ours) in BASES.items()
        for attr, value in vars(ours).items()
        if callable(value) and not attr.startswith("__") and hasattr(base, attr) and attr not in PYGLS_OVERRIDES[name]
    ]
    assert unlisted == []


def test_every_private_attribute_used_is_on_a_fresh_pygls_instance() -> None:
    assert missing_private(PYGLS_PRIVATE) == []


def test_a_change_in_pygls_is_named() -> None:
    # As if pygls had renamed a parameter, dropped a method and an attribute.
    changed = {"LanguageServerProtocol": {"structure_message": ("self", "message"), "_gone_in_pygls": ("self",)}}
    assert override_problems(changed) == [
        f"{PYGLS}: LanguageServerProtocol.structure_message('self', 'data'), fixlore expects ('self', 'message')",
        f"{PYGLS}: LanguageServerProtocol._gone_in_pygls is gone (FixloreProtocol overrides it)",
        "FixloreProtocol no longer overrides _gone_in_pygls: drop it from PYGLS_OVERRIDES",
    ]
    assert missing_private({"Workspace": ("_position_codec", "_gone_in_pygls")}) == [
        f"{PYGLS}: a fresh Workspace has no _gone_in_pygls"
    ]
