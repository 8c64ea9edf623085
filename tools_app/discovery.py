"""Find toolsets in installed apps: every module of an app's ``tools`` package is one toolset (a
package too: its ``__init__`` names the `toolset` its modules add to, as `demo.tools.conformance`)."""

from __future__ import annotations

import logging
import pkgutil
from importlib import import_module

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import module_has_submodule

from tools_app.toolsets import Toolset

logger = logging.getLogger(__name__)

toolsets: dict[str, Toolset] = {}


def autodiscover() -> dict[str, Toolset]:
    for app_config in apps.get_app_configs():
        if not module_has_submodule(app_config.module, "tools"):
            continue
        package = import_module(f"{app_config.name}.tools")
        for info in pkgutil.iter_modules(package.__path__):
            module = import_module(f"{package.__name__}.{info.name}")
            toolset = getattr(module, "toolset", None)
            if not isinstance(toolset, Toolset):
                continue
            toolset.name = toolset.name or info.name
            other = toolsets.get(toolset.name)
            if other is not None and other is not toolset:
                raise ImproperlyConfigured(f"two toolsets are named {toolset.name!r}: {module.__name__} and another")
            toolsets[toolset.name] = toolset
    logger.debug("toolsets discovered: %s", ", ".join(sorted(toolsets)))
    return toolsets
