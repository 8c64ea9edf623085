"""What staff may do on an admin page whose rows nobody edits by hand (the protocol, a provider,
a worker or a workflow writes them): mixins named before ``admin.ModelAdmin`` or an inline, so a
page says at a glance what it allows."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest


class NoAdding:
    """No Add button, no add view: such rows are only written by what they record."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:  # obj: inlines pass one
        return False


class NoEditing:
    """Viewed, never edited: a Save would write back the whole row as loaded."""

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class NoDeleting:
    """Money and audit records are not an operator's to delete (nor, through cascades, what hangs
    off them): no Delete link, no "delete selected" action, 403 on the delete view, superusers too."""

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ViewOnly(NoAdding, NoEditing):
    """Viewed, never added or edited here."""
