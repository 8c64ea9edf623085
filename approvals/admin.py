"""Operators' view of elicitations: filter what is pending, decide approvals, inspect webhooks."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from approvals import services
from approvals.models import Elicitation, ElicitationNotPending, Payment, WebhookDelivery


class PaymentInline(admin.StackedInline):
    model = Payment
    can_delete = False
    extra = 0
    readonly_fields = ["amount", "currency", "description", "provider", "provider_reference"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Elicitation)
class ElicitationAdmin(admin.ModelAdmin):
    list_display = ["id", "tenant", "kind", "status", "tool", "reference", "subject", "created_at", "expires_at"]
    list_filter = ["status", "kind", "tenant"]
    list_select_related = ["tenant"]
    search_fields = ["id", "reference", "tool", "subject"]
    readonly_fields = [f.name for f in Elicitation._meta.fields] + ["page"]
    inlines = [PaymentInline]
    actions = ["approve", "deny"]
    change_form_template = "approvals/admin/elicitation_change_form.html"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="page the user opens")
    def page(self, row: Elicitation) -> str:
        return format_html('<a href="{}">{}</a>', row.url, row.url)

    def get_urls(self) -> list[URLPattern]:
        decide = self.admin_site.admin_view(require_POST(self.decide_view))
        return [path("<str:elicitation_id>/decide/", decide, name="approvals_elicitation_decide"), *super().get_urls()]

    def _decide(self, request: HttpRequest, row: Elicitation, *, approve: bool, note: str) -> bool:
        try:
            services.approval_decide(elicitation=row, user=request.user, approve=approve, note=note)
        except (ElicitationNotPending, services.WrongKind) as exc:
            self.message_user(request, str(exc), messages.WARNING)
            return False
        return True

    def decide_view(self, request: HttpRequest, elicitation_id: str) -> HttpResponse:
        if not self.has_change_permission(request):
            return HttpResponse(status=403)
        row = get_object_or_404(Elicitation, pk=elicitation_id)
        approve = "_approve" in request.POST
        if self._decide(request, row, approve=approve, note=request.POST.get("note", "").strip()):
            self.message_user(request, f"{row.pk} {'approved' if approve else 'denied'}; the waiting client is told.")
        return HttpResponseRedirect(reverse("admin:approvals_elicitation_change", args=[row.pk]))

    def _decide_many(self, request: HttpRequest, queryset: QuerySet[Elicitation], *, approve: bool) -> None:
        rows = queryset.filter(kind=Elicitation.Kind.APPROVAL, status=Elicitation.Status.PENDING)
        decided = sum(self._decide(request, row, approve=approve, note="") for row in rows)
        skipped = queryset.count() - decided
        verb = "approved" if approve else "denied"
        self.message_user(request, f"{decided} approval(s) {verb}; {skipped} skipped (not a pending approval).")

    @admin.action(description="Approve selected pending approvals")
    def approve(self, request: HttpRequest, queryset: QuerySet[Elicitation]) -> None:
        self._decide_many(request, queryset, approve=True)

    @admin.action(description="Deny selected pending approvals")
    def deny(self, request: HttpRequest, queryset: QuerySet[Elicitation]) -> None:
        self._decide_many(request, queryset, approve=False)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ["event_id", "provider", "event_type", "outcome", "flagged", "elicitation_link", "received_at"]
    list_filter = ["flagged", "outcome", "provider"]
    list_select_related = ["elicitation"]
    search_fields = ["event_id", "elicitation__id"]
    readonly_fields = [f.name for f in WebhookDelivery._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="elicitation")
    def elicitation_link(self, delivery: WebhookDelivery) -> str:
        if delivery.elicitation_id is None:
            return "-"
        url = reverse("admin:approvals_elicitation_change", args=[delivery.elicitation_id])
        return format_html('<a href="{}">{}</a>', url, delivery.elicitation_id)
