"""Each package's own errors subclass one base (`ApprovalsError`, `ToolsAppError`,
`NotificationsError`, `OperatorApiError`, `McpTasksError`, the core's `McpsiteError` and the root's
`McpServerError`, each in the package's ``exceptions`` module), and keep their standard-library base."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

APPS = {
    "approvals": "ApprovalsError",
    "tools_app": "ToolsAppError",
    "notifications": "NotificationsError",
    "operator_api": "OperatorApiError",
    "mcp_tasks": "McpTasksError",
    "mcpsite": "McpsiteError",
    "mcp_server": "McpServerError",
}


def errors_defined_in(app: str) -> set[type[BaseException]]:
    package = importlib.import_module(app)
    names = [app] + [
        info.name
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{app}.")
        if ".migrations" not in info.name
    ]
    errors: set[type[BaseException]] = set()
    for name in names:
        module = importlib.import_module(name)
        errors.update(
            value
            for value in vars(module).values()
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == name
        )
    return errors


@pytest.mark.parametrize("app", sorted(APPS))
def test_each_app_raises_errors_of_one_base(app: str) -> None:
    errors = errors_defined_in(app)
    bases = [error for error in errors if error.__name__ == APPS[app]]
    assert [f"{base.__module__}.{base.__name__}" for base in bases] == [f"{app}.exceptions.{APPS[app]}"]
    assert sorted(error.__name__ for error in errors if not issubclass(error, bases[0])) == []


def test_the_errors_keep_their_standard_library_bases() -> None:
    from rest_framework.exceptions import PermissionDenied

    from approvals.providers import UnknownProvider
    from approvals.providers.wire import MalformedEvent
    from approvals.services.ending import NotYours, WrongKind
    from mcpsite.jsonbody import JSONTooDeep
    from notifications.addresses import EndpointRefused
    from operator_api.permissions import InsufficientScope
    from tools_app.sensitive import UnsafeElicitation
    from tools_app.wirenames import WireNameConflict

    assert issubclass(WrongKind, ValueError)
    assert issubclass(JSONTooDeep, ValueError)
    assert issubclass(NotYours, PermissionError)
    assert issubclass(UnknownProvider, LookupError)
    assert issubclass(MalformedEvent, ValueError)
    assert issubclass(EndpointRefused, ValueError)
    assert issubclass(InsufficientScope, PermissionDenied)
    assert issubclass(UnsafeElicitation, TypeError)
    assert issubclass(WireNameConflict, ValueError)
