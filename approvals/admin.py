"""Operators' view of elicitations: filter what is pending, decide approvals, inspect webhooks."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from approvals import services
from approvals.models import Elicitation, ElicitationEvent, ElicitationNotPending, Payment, WebhookDelivery


class PaymentInline(admin.StackedInline):
    model = Payment
    can_delete = False
    extra = 0
    readonly_fields = ["amount", "currency", "description", "provider", "provider_reference"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class AgeFilter(admin.SimpleListFilter):
    title = "age"
    parameter_name = "age"
    BUCKETS = {"1h": timedelta(hours=1), "1d": timedelta(days=1), "7d": timedelta(days=7)}

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("1h", "under an hour"), ("1d", "under a day"), ("7d", "under a week"), ("older", "a week or older")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Elicitation]) -> QuerySet[Elicitation]:
        value = self.value()
        now = timezone.now()
        if value in self.BUCKETS:
            return queryset.filter(created_at__gte=now - self.BUCKETS[value])
        if value == "older":
            return queryset.filter(created_at__lt=now - self.BUCKETS["7d"])
        return queryset


class FlaggedFilter(admin.SimpleListFilter):
    title = "flagged payments"
    parameter_name = "flagged"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "money received for an ended step")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Elicitation]) -> QuerySet[Elicitation]:
        if self.value() == "yes":
            return queryset.filter(deliveries__flagged=True).distinct()
        return queryset


class DeliveryInline(admin.TabularInline):
    model = WebhookDelivery
    fields = readonly_fields = ("received_at", "provider", "event_id", "event_type", "outcome", "flagged")
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class EventInline(admin.TabularInline):
    model = ElicitationEvent
    verbose_name_plural = "audit trail"
    fields = readonly_fields = ("at", "status", "source", "actor", "note")
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# Detail-page buttons -> (the service, whether a note is required). Each ends the row, audits it
# and publishes the completion event, exactly as the webhook and the beat task do.
STAFF_ACTIONS: dict[str, str] = {
    "_approve": "approved",
    "_deny": "denied",
    "_complete": "marked completed",
    "_cancel": "cancelled",
    "_expire": "expired",
}


def staff_end(row: Elicitation, button: str, user: Any, note: str) -> Elicitation:
    if button in ("_approve", "_deny"):
        return services.approval_decide(elicitation=row, user=user, approve=button == "_approve", note=note)
    if button == "_complete":
        return services.elicitation_complete_by_staff(elicitation=row, user=user, reason=note)
    if button == "_cancel":
        return services.elicitation_cancel_by_staff(elicitation=row, user=user, reason=note)
    return services.elicitation_expire_by_staff(elicitation=row, user=user, reason=note)


class NoDeleting:
    """Money and audit records are not an operator's to delete (nor, through cascades, what hangs
    off them): no Delete link, no "delete selected" action, 403 on the delete view, superusers too."""

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Elicitation)
class ElicitationAdmin(NoDeleting, admin.ModelAdmin):
    list_display = ["id", "tenant", "kind", "status", "tool", "reference", "subject", "created_at", "expires_at"]
    list_filter = ["status", "kind", "tenant", AgeFilter, FlaggedFilter]
    list_select_related = ["tenant"]
    search_fields = ["id", "client_id", "subject", "tool", "reference", "payment__provider_reference"]
    readonly_fields = [f.name for f in Elicitation._meta.fields] + ["page"]
    inlines = [PaymentInline, DeliveryInline, EventInline]
    actions = ["approve", "deny", "cancel", "expire"]
    change_form_template = "approvals/admin/elicitation_change_form.html"
    show_full_result_count = False  # no COUNT(*) over every row on each page

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Read-only for everyone. The change permission is what the staff actions need (they post
        to decide/), but no field is an operator's to edit, and a Save would write back the whole
        row as loaded, racing a webhook that ends it meanwhile."""
        if request.method == "POST":
            raise PermissionDenied
        read_only = {"show_save": False, "show_save_and_continue": False, "show_save_and_add_another": False}
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **read_only})

    @admin.display(description="page the user opens")
    def page(self, row: Elicitation) -> str:
        return format_html('<a href="{}">{}</a>', row.url, row.url)

    def get_urls(self) -> list[URLPattern]:
        decide = self.admin_site.admin_view(require_POST(self.decide_view))
        return [path("<str:elicitation_id>/decide/", decide, name="approvals_elicitation_decide"), *super().get_urls()]

    def decide_view(self, request: HttpRequest, elicitation_id: str) -> HttpResponse:
        if not self.has_change_permission(request):
            return HttpResponse(status=403)
        row = get_object_or_404(Elicitation, pk=unquote(elicitation_id))
        button = next((name for name in STAFF_ACTIONS if name in request.POST), None)
        if button is None:
            return HttpResponse("no action chosen", status=400)
        try:
            staff_end(row, button, request.user, request.POST.get("note", "").strip())
        except (ElicitationNotPending, services.WrongKind, ValueError) as exc:
            self.message_user(request, str(exc), messages.WARNING)
        else:
            self.message_user(request, f"{row.pk} {STAFF_ACTIONS[button]}; the waiting client is told.")
        return HttpResponseRedirect(reverse("admin:approvals_elicitation_change", args=[quote(row.pk)]))

    def _act(self, request: HttpRequest, queryset: QuerySet[Elicitation], button: str) -> None:
        done = skipped = 0
        for row in queryset.filter(status=Elicitation.Status.PENDING):
            try:
                staff_end(row, button, request.user, "")
            except (ElicitationNotPending, services.WrongKind, ValueError):
                skipped += 1
            else:
                done += 1
        skipped += queryset.exclude(status=Elicitation.Status.PENDING).count()
        self.message_user(request, f"{done} {STAFF_ACTIONS[button]}; {skipped} skipped (not pending, or another kind).")

    @admin.action(description="Approve selected pending approvals", permissions=["change"])
    def approve(self, request: HttpRequest, queryset: QuerySet[Elicitation]) -> None:
        self._act(request, queryset, "_approve")

    @admin.action(description="Deny selected pending approvals", permissions=["change"])
    def deny(self, request: HttpRequest, queryset: QuerySet[Elicitation]) -> None:
        self._act(request, queryset, "_deny")

    @admin.action(description="Cancel selected pending elicitations", permissions=["change"])
    def cancel(self, request: HttpRequest, queryset: QuerySet[Elicitation]) -> None:
        self._act(request, queryset, "_cancel")

    @admin.action(description="Expire selected pending elicitations", permissions=["change"])
    def expire(self, request: HttpRequest, queryset: QuerySet[Elicitation]) -> None:
        self._act(request, queryset, "_expire")


@admin.register(Payment)
class PaymentAdmin(NoDeleting, admin.ModelAdmin):
    """What was charged where, read-only: amounts change only with the elicitation that opened them."""

    list_display = ["elicitation_link", "amount", "currency", "provider", "provider_reference"]
    list_filter = ["provider", "currency"]
    list_select_related = ["elicitation"]
    search_fields = ["elicitation__id", "provider_reference"]
    readonly_fields = [f.name for f in Payment._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="elicitation")
    def elicitation_link(self, payment: Payment) -> str:
        url = reverse("admin:approvals_elicitation_change", args=[quote(payment.elicitation_id)])
        return format_html('<a href="{}">{}</a>', url, payment.elicitation_id)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(NoDeleting, admin.ModelAdmin):
    list_display = ["event_id", "provider", "event_type", "outcome", "flagged", "elicitation_link", "received_at"]
    list_filter = ["flagged", "outcome", "provider"]
    list_select_related = ["elicitation"]
    search_fields = ["event_id", "elicitation__id"]
    readonly_fields = [f.name for f in WebhookDelivery._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # what a provider sent: viewed, never edited

    @admin.display(description="elicitation")
    def elicitation_link(self, delivery: WebhookDelivery) -> str:
        if delivery.elicitation_id is None:
            return "-"
        url = reverse("admin:approvals_elicitation_change", args=[quote(delivery.elicitation_id)])
        return format_html('<a href="{}">{}</a>', url, delivery.elicitation_id)
