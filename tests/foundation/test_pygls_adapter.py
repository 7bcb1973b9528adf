"""What fixlore relies on of pygls still holds: each overridden method, its parameters, each private attribute.

When pygls changes (a new version, the pin lifted), these fail naming the
method or attribute that moved, instead of the server failing in an editor.
The lists are in ``fixlore.lsp.transport.pygls_adapter``; the test also fails
when fixlore overrides a pygls method the lists do not name, or overrides pygls
anywhere but in the adapter's two modules (``pygls_adapter``, ``pygls_protocol``).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from importlib.metadata import version
from typing import Any

from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import Workspace

import fixlore.lsp
from fixlore.lsp.server import create_server
from fixlore.lsp.transport import pygls_adapter, pygls_protocol
from fixlore.lsp.transport.pygls_adapter import PYGLS_OVERRIDES, PYGLS_PRIVATE, PyglsServer
from fixlore.lsp.transport.pygls_protocol import FixloreProtocol

PYGLS = f"pygls {version('pygls')}"
ADAPTER = frozenset({pygls_adapter.__name__, pygls_protocol.__name__})
"""The modules where fixlore may override pygls."""
BASES: dict[str, tuple[type[Any], type[Any]]] = {
    "LanguageServerProtocol": (LanguageServerProtocol, FixloreProtocol),
    "LanguageServer": (LanguageServer, PyglsServer),
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


def overrides_outside(modules: frozenset[str], classes: list[type[Any]]) -> list[str]:
    """The pygls methods that ``classes`` override outside ``modules`` (the adapter's)."""
    found: list[str] = []
    for cls in classes:
        theirs = [base for base in cls.__mro__ if base.__module__.split(".")[0] == "pygls"]
        if cls.__module__ in modules or not theirs:
            continue
        for attr, value in vars(cls).items():
            pygls_owner = next((base for base in theirs if attr in vars(base)), None)
            if callable(value) and not attr.startswith("__") and pygls_owner is not None:
                found.append(f"{cls.__module__}.{cls.__qualname__}.{attr} overrides pygls' {pygls_owner.__name__}")
    return found


def _fixlore_lsp_classes() -> list[type[Any]]:
    classes: list[type[Any]] = []
    for info in pkgutil.walk_packages(fixlore.lsp.__path__, "fixlore.lsp."):
        if info.name.endswith("__main__") or ".sample_workspace" in info.name:
            continue
        module = importlib.import_module(info.name)
        classes += [c for c in vars(module).values() if isinstance(c, type) and c.__module__ == info.name]
    return classes


def test_no_class_outside_the_adapter_overrides_pygls() -> None:
    classes = _fixlore_lsp_classes()
    assert any(c.__name__ == "FixloreServer" for c in classes)  # the walk reaches the server
    assert overrides_outside(ADAPTER, classes) == []


def test_an_override_outside_the_adapter_is_named() -> None:
    class Elsewhere(PyglsServer):
        def start_tcp(self, host: str, port: int) -> None:
            raise NotImplementedError

        def report_server_error(self, error: Exception, source: Any) -> None:
            raise NotImplementedError

    where = f"{__name__}.test_an_override_outside_the_adapter_is_named.<locals>.Elsewhere"
    assert overrides_outside(ADAPTER, [Elsewhere, PyglsServer, FixloreProtocol]) == [
        f"{where}.start_tcp overrides pygls' JsonRPCServer",
        f"{where}.report_server_error overrides pygls' LanguageServer",
    ]


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
