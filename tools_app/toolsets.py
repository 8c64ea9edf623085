"""Toolsets: one module of tools, prompts and resources that a tenant can enable.

A tool author writes plain SDK-style functions with resolver-style dependencies and registers
them on a module-level ``toolset``; `tools_app` discovers the module (like ``admin.py``) and each
tenant's `MCPServer` installs the toolsets the tenant enabled. Nobody here builds protocol
messages by hand.
"""

from __future__ import annotations

import functools
import inspect
import json
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit as SdkElicit
from mcp.server.mcpserver.resolve import build_resolver_plans, find_resolved_parameters, resolve_arguments
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.context_injection import find_context_parameter
from mcp_types import InputRequiredResult
from pydantic import BaseModel

from tools_app.exceptions import ToolsAppError
from tools_app.mcp_apps import View
from tools_app.rounds import RoundMiddleware
from tools_app.sdk import sdk_tool
from tools_app.sensitive import check_form_schema, check_resolvers
from tools_app.tasking import TaskMode, TaskSupport, handing_over
from tools_app.tenant import TenantInfo
from tools_app.wirenames import WireNames, wire_names

F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=BaseModel)

_CONTEXT_PARAM = "mcpsite_context"
CONTEXT_PARAMETER = inspect.Parameter(_CONTEXT_PARAM, inspect.Parameter.KEYWORD_ONLY, annotation=Context)
"""The `Context` a wrapper asks the SDK for when the wrapped function does not take one itself."""


def resolved_parameters(fn: Callable[..., Any]) -> list[inspect.Parameter]:
    """`fn`'s parameters with their annotations evaluated (string annotations need `fn`'s module)."""
    hints = typing.get_type_hints(fn, include_extras=True)
    return [p.replace(annotation=hints.get(p.name, p.annotation)) for p in inspect.signature(fn).parameters.values()]


def present_as(wrapper: F, fn: Callable[..., Any], parameters: list[inspect.Parameter]) -> F:
    """Give `wrapper` `fn`'s identity and `parameters` as its signature: the SDK keys a resolver's
    wire state by module:qualname and plans a function's arguments from its signature."""
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__module__ = fn.__module__
    wrapper.__doc__ = fn.__doc__
    wrapper.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
    return wrapper


class Elicit(SdkElicit[M]):
    """The SDK's form `Elicit`, refusing at construction a schema that asks for a secret."""

    def __init__(self, message: str, schema: type[M]) -> None:
        check_form_schema(schema, where=f"Elicit({message!r})")
        super().__init__(message, rendered_once(schema))


@functools.cache
def rendered_once(schema: type[M]) -> type[M]:
    """`schema` with its JSON Schema rendered once per set of arguments instead of on every round.

    The SDK renders a form's ``requestedSchema`` with pydantic's ``model_json_schema`` each time a
    resolver asks, and again on the retry to check that the answer is to the same question: about
    a third of a two-round call's time (bench/run, two-round call). This subclass has the same
    name, fields and docstring (so the same schema, and answers are still instances of `schema`);
    it keeps each rendering as JSON text and hands every caller a fresh copy.
    """
    rendered: dict[tuple[Any, ...], str] = {}

    def model_json_schema(cls: type[M], *args: Any, **kwargs: Any) -> dict[str, Any]:
        key = (cls, args, tuple(sorted(kwargs.items())))
        text = rendered.get(key)
        if text is None:
            parent = super(memoized, cls)
            text = rendered[key] = json.dumps(parent.model_json_schema(*args, **kwargs))  # type: ignore[attr-defined]
        result: dict[str, Any] = json.loads(text)
        return result

    namespace = {
        "__module__": schema.__module__,
        "__qualname__": schema.__qualname__,
        "__doc__": schema.__doc__,
        "model_json_schema": classmethod(model_json_schema),
    }
    # `type()` hands the class to the bases' metaclass (pydantic's), as a class statement would.
    memoized = cast("type[M]", type(schema.__name__, (schema,), namespace))
    _RENDERED_ONCE.add(memoized)
    return memoized


_RENDERED_ONCE: set[type[Any]] = set()


def is_rendered_once(schema: type[Any]) -> bool:
    """Whether `schema` came from `rendered_once` (its JSON Schema is fixed, so its form question
    renders the same every time: `tools_app.sdk.memoize_form_questions` keeps the rendering)."""
    return schema in _RENDERED_ONCE


def tenant_of(ctx: Context[Any, Any]) -> TenantInfo:
    """The tenant whose endpoint is serving this request."""
    state = ctx.request_context.lifespan_context
    if not isinstance(state, TenantInfo):
        raise RuntimeError("not running inside a tenant's MCP server")
    return state


@dataclass
class _Entry:
    kind: str  # "tool" | "prompt" | "resource"
    fn: Callable[..., Any]
    kwargs: dict[str, Any] = field(default_factory=dict)
    names: WireNames | None = None  # the public names of its questions (`tools_app.wirenames`)
    task: TaskSupport | None = None  # run as a durable task (`tools_app.tasking`, `mcp_tasks`)
    scopes: tuple[str, ...] = ()  # the OAuth scopes a call needs beyond the tenant's own (`Toolset.tool`)
    audit_args: tuple[str, ...] = ()  # arguments safe to record in full in the audit log (`Toolset.tool`)

    @property
    def name(self) -> str:
        """The name it is served under: the one given, or the function's."""
        return self.kwargs.get("name") or self.fn.__name__


class UndescribedScope(ToolsAppError, ValueError):
    """A tool names a scope its toolset does not describe (the consent page would have no words for it)."""


class UnknownAuditArgument(ToolsAppError, ValueError):
    """A tool marks an argument safe to audit that it does not take (a misspelling would record nothing)."""


class Toolset:
    def __init__(
        self, name: str | None = None, *, description: str = "", scopes: Mapping[str, str] | None = None
    ) -> None:
        self.name = name or ""  # discovery fills in the module name
        self.description = description
        # The scopes its tools may need, each with the words the consent page shows for it.
        self.scopes = dict(scopes or {})
        self._entries: list[_Entry] = []
        self._tools: list[Tool] | None = None
        self._views: dict[str, View] = {}  # MCP Apps views its tools point at (`tools_app.mcp_apps`)

    def __repr__(self) -> str:
        return f"<Toolset {self.name}>"

    def tool(
        self,
        name: str | None = None,
        *,
        task: TaskMode | None = None,
        task_retries: int = 0,
        ask_before_task: bool = False,
        scopes: Sequence[str] = (),
        audit_args: Sequence[str] = (),
        ui: View | None = None,
        **kwargs: Any,
    ) -> Callable[[F], F]:
        """Register a tool; takes the keyword arguments of `MCPServer.tool()`, ``task`` (with
        ``task_retries``, ``ask_before_task``) to run it as a durable task (`tools_app.tasking`),
        ``scopes``: the OAuth scopes a token needs to call it, each described by the toolset's
        ``scopes`` (a call without them is refused before it runs, `mcpsite.scopes`), and ``ui``:
        the MCP Apps view a host renders for a call (``_meta.ui.resourceUri``; the tool still
        answers text for clients without Apps). ``audit_args``: the arguments whose values are safe
        to record in full in the audit log (a path, a reference); of every other argument the log
        keeps only a digest (`audit`)."""
        support = TaskSupport(task, task_retries, ask_before_task) if task is not None else None
        if isinstance(scopes, str):
            scopes = scopes.split()
        if isinstance(audit_args, str):
            audit_args = audit_args.split()
        if ui is not None:
            self.view(ui)
            kwargs["meta"] = {**(kwargs.get("meta") or {}), "ui": {"resourceUri": ui.uri}}

        def decorator(fn: F) -> F:
            where = f"tool {name or fn.__name__!r}"
            unknown = [arg for arg in audit_args if arg not in inspect.signature(fn).parameters]
            if unknown:
                raise UnknownAuditArgument(f"{where} marks {', '.join(unknown)} safe to audit, which it does not take")
            undescribed = [scope for scope in scopes if scope not in self.scopes]
            if undescribed:
                raise UndescribedScope(
                    f"{where} needs scope(s) {', '.join(undescribed)}, which its toolset does not describe:"
                    " name each in Toolset(scopes={scope: words for the consent page})"
                )
            check_resolvers(fn, where=where)
            registered = handing_over(fn) if support is not None and support.ask_before_task else fn
            entry = _Entry(
                "tool",
                registered,
                {"name": name, **kwargs},
                wire_names(fn, where=where),
                support,
                tuple(scopes),
                tuple(audit_args),
            )
            self._entries.append(entry)
            return fn

        return decorator

    def view(self, view: View) -> View:
        """Serve an MCP Apps view (its ``ui://`` resource and app-only tools) with this toolset."""
        self._views.setdefault(view.uri, view)
        return view

    def views(self) -> list[View]:
        return list(self._views.values())

    def views_shown_by(self) -> dict[str, frozenset[str]]:
        """Each of its views by ``ui://`` address: the tools that show it (``ui=``), by name."""
        shown: dict[str, set[str]] = {uri: set() for uri in self._views}
        for entry in self._entries:
            if entry.kind == "tool":
                uri = ((entry.kwargs.get("meta") or {}).get("ui") or {}).get("resourceUri")
                if uri in shown:
                    shown[uri].add(entry.name)
        return {uri: frozenset(names) for uri, names in shown.items()}

    def app_tools_shown_with(self, names: frozenset[str]) -> frozenset[str]:
        """The app-only tools of the views that any of `names` shows: what a host calls for a view
        while it shows a call's result (`mcpsite.roles`: a role allowing a tool allows those)."""
        return frozenset(
            fn.__name__
            for uri, shown in self.views_shown_by().items()
            if shown & names
            for fn in self._views[uri].app_tools
        )

    def prompt(self, name: str | None = None, **kwargs: Any) -> Callable[[F], F]:
        """Register a prompt; unlike the SDK's, it may take `Annotated[T, Resolve(fn)]` parameters."""

        def decorator(fn: F) -> F:
            where = f"prompt {name or fn.__name__!r}"
            check_resolvers(fn, where=where)
            names = wire_names(fn, where=where)
            self._entries.append(_Entry("prompt", _with_resolvers(fn), {"name": name or fn.__name__, **kwargs}, names))
            return fn

        return decorator

    def resource(self, uri: str, **kwargs: Any) -> Callable[[F], F]:
        """Register a resource or resource template; takes the arguments of `MCPServer.resource()`."""

        def decorator(fn: F) -> F:
            self._entries.append(_Entry("resource", fn, {"uri": uri, **kwargs}))
            return fn

        return decorator

    def tool_names(self) -> list[str]:
        """The names its tools are registered under (the SDK's default: the function's name)."""
        return [entry.name for entry in self._entries if entry.kind == "tool"]

    def task_tools(self) -> dict[str, TaskSupport]:
        """Its tools that run as tasks, by registered name, and how."""
        return {entry.name: entry.task for entry in self._entries if entry.kind == "tool" and entry.task is not None}

    def tool_scopes(self) -> dict[str, tuple[str, ...]]:
        """Its tools that need scopes, by registered name, and the scopes each needs."""
        return {entry.name: entry.scopes for entry in self._entries if entry.kind == "tool" and entry.scopes}

    def tool_audit_args(self) -> dict[str, tuple[str, ...]]:
        """Its tools that name arguments safe to audit in full, by registered name, and those names."""
        return {entry.name: entry.audit_args for entry in self._entries if entry.kind == "tool" and entry.audit_args}

    def tools(self) -> list[Tool]:
        """Its tools' SDK records, built once per process and shared by every tenant server that
        serves this toolset (passed as ``MCPServer(tools=...)``). A record only describes its
        function (argument model, schemas), the same for every tenant, and building one (pydantic
        models and schemas) was most of what building a tenant's server cost."""
        if self._tools is None:
            self._tools = [Tool.from_function(e.fn, **e.kwargs) for e in self._entries if e.kind == "tool"]
        return self._tools

    def install(self, server: MCPServer[Any], rounds: RoundMiddleware) -> None:
        """Serve its tools, prompts and resources on `server`, telling `rounds` (the server's round
        layer) the public names of each one's questions."""
        for entry in self._entries:
            if entry.kind == "tool":
                if sdk_tool(server, entry.name) is None:  # not given built
                    server.add_tool(entry.fn, **entry.kwargs)
                rounds.register("tools/call", entry.name, entry.names)
            elif entry.kind == "prompt":
                server.prompt(**entry.kwargs)(entry.fn)
                rounds.register("prompts/get", entry.kwargs["name"], entry.names)
            else:
                kwargs = dict(entry.kwargs)
                server.resource(kwargs.pop("uri"), **kwargs)(entry.fn)


def _with_resolvers(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a prompt so its `Resolve(...)` parameters are filled like a tool's.

    The SDK runs resolvers for tools only; prompts get the same behaviour by resolving in a
    wrapper through the SDK's own public `resolve_arguments` (so both generations work: an
    `InputRequiredResult` at 2026-07-28, a back-channel elicitation at 2025-11-25).
    """
    resolved = find_resolved_parameters(fn)
    if not resolved:
        return fn
    own_context = find_context_parameter(fn)
    visible = [p for p in resolved_parameters(fn) if p.name not in resolved and p.name != own_context]
    plans = build_resolver_plans(resolved, {p.name for p in visible})

    async def wrapper(**kwargs: Any) -> Any:
        ctx = kwargs.pop(_CONTEXT_PARAM)
        values = await resolve_arguments(resolved, plans, kwargs, ctx)
        if isinstance(values, InputRequiredResult):
            return values
        if own_context is not None:
            kwargs[own_context] = ctx
        result = fn(**kwargs, **values)
        return await result if inspect.isawaitable(result) else result

    return present_as(wrapper, fn, [*visible, CONTEXT_PARAMETER])
