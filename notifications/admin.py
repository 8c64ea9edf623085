"""Staff configure endpoints and watch deliveries.

Who sees what: only staff reach the admin, and each page needs its model permission (superusers
have all). An endpoint's secret is shown once, to the staff member who created or rotated it,
on the page that follows; no page shows it again. Deliveries and attempts are read-only (what
was sent and what the receiver answered); "retry now" needs the change permission on deliveries.
Tenant members see none of this here.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import quote
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from mcpsite.admin_access import NoAdding, NoDeleting, ViewOnly
from notifications import services
from notifications.addresses import EndpointRefused, check_url
from notifications.models import Attempt, Delivery, Endpoint, EventType


class EndpointForm(forms.ModelForm):
    url = forms.URLField(
        label="URL", max_length=500, assume_scheme="https", help_text=Endpoint._meta.get_field("url").help_text
    )
    event_types = forms.MultipleChoiceField(choices=EventType.choices, widget=forms.CheckboxSelectMultiple)

    class Meta:
        model = Endpoint
        fields = ["tenant", "url", "description", "event_types", "enabled"]

    def clean_url(self) -> str:
        url = str(self.cleaned_data["url"])
        try:
            check_url(url)
        except EndpointRefused as exc:
            raise forms.ValidationError(exc.reason) from None
        return url


def secret_page(request: HttpRequest, endpoint: Endpoint, secret: str, title: str) -> TemplateResponse:
    """The one page that shows a secret (not a message: those travel in a cookie)."""
    context = {
        "title": title,
        "endpoint": endpoint,
        "secret": secret,
        "change_url": reverse("admin:notifications_endpoint_change", args=[endpoint.pk]),
        **admin.site.each_context(request),
    }
    response = TemplateResponse(request, "notifications/admin/secret.html", context)
    response["Cache-Control"] = "no-store"
    return response


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    form = EndpointForm
    list_display = ["url", "scope", "types", "enabled", "created_at"]
    list_filter = ["enabled", "tenant"]
    list_select_related = ["tenant"]
    search_fields = ["url", "description", "tenant__slug"]
    readonly_fields = ["created_at", "secret_rotated_at"]
    actions = ["send_test_event", "rotate_secret"]

    @admin.display(description="tenant", ordering="tenant__slug")
    def scope(self, endpoint: Endpoint) -> str:
        return endpoint.tenant.slug if endpoint.tenant is not None else "site-wide"

    @admin.display(description="events")
    def types(self, endpoint: Endpoint) -> str:
        return ", ".join(endpoint.event_types) or "-"

    def delete_model(self, request: HttpRequest, obj: Endpoint) -> None:
        services.endpoint_delete(endpoint=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Endpoint]) -> None:
        for endpoint in queryset:
            services.endpoint_delete(endpoint=endpoint)

    def response_add(self, request: HttpRequest, obj: Endpoint, post_url_continue: str | None = None) -> HttpResponse:
        return secret_page(request, obj, obj.secret, "Endpoint added: copy its signing secret now")

    @admin.action(description="Send a test event to the selected endpoints", permissions=["change"])
    def send_test_event(self, request: HttpRequest, queryset: QuerySet[Endpoint]) -> None:
        sent = [services.endpoint_send_test(endpoint=endpoint, user=request.user) for endpoint in queryset]
        self.message_user(request, f"{len(sent)} test event(s) queued: " + ", ".join(d.pk for d in sent))

    @admin.action(description="Rotate the signing secret (one endpoint)", permissions=["change"])
    def rotate_secret(self, request: HttpRequest, queryset: QuerySet[Endpoint]) -> HttpResponse | None:
        if queryset.count() != 1:
            self.message_user(request, "Rotate one endpoint at a time: its new secret is shown once.", messages.WARNING)
            return None
        endpoint = queryset.get()
        secret = services.endpoint_rotate_secret(endpoint=endpoint)
        return secret_page(request, endpoint, secret, "Secret rotated: copy the new signing secret now")


# What was sent and answered: never added or deleted by hand (the senders write it).
class AttemptInline(NoAdding, NoDeleting, admin.TabularInline):
    model = Attempt
    fields = readonly_fields = ("started_at", "status_code", "duration", "response_excerpt", "error")
    extra = 0
    can_delete = False

    @admin.display(description="duration")
    def duration(self, attempt: Attempt) -> str:
        return f"{attempt.duration_seconds:.2f} s"


@admin.register(Delivery)
class DeliveryAdmin(NoAdding, NoDeleting, admin.ModelAdmin):
    list_display = ["id", "event_type", "endpoint", "status", "attempts", "created_at", "next_attempt_at"]
    list_filter = ["status", "event_type", "endpoint"]
    list_select_related = ["endpoint", "endpoint__tenant"]
    search_fields = ["id"]
    readonly_fields = [f.name for f in Delivery._meta.fields]
    inlines = [AttemptInline]
    actions = ["retry_now"]
    show_full_result_count = False

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        read_only = {"show_save": False, "show_save_and_continue": False, "show_save_and_add_another": False}
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **read_only})

    def save_model(self, request: HttpRequest, obj: Delivery, form: Any, change: bool) -> None:
        pass  # every field is read-only; the senders own the row

    @admin.action(description="Retry the selected failed deliveries now", permissions=["change"])
    def retry_now(self, request: HttpRequest, queryset: QuerySet[Delivery]) -> None:
        failed = list(queryset.filter(status=Delivery.Status.FAILED))
        for delivery in failed:
            services.delivery_retry_now(delivery=delivery)
        skipped = queryset.count() - len(failed)
        self.message_user(request, f"{len(failed)} queued for one more attempt; {skipped} skipped (not failed).")


@admin.register(Attempt)
class AttemptAdmin(ViewOnly, NoDeleting, admin.ModelAdmin):
    list_display = ["started_at", "delivery_link", "status_code", "duration_seconds", "error"]
    list_filter = ["status_code", "delivery__event_type", "delivery__endpoint"]
    list_select_related = ["delivery"]
    search_fields = ["delivery__id"]
    readonly_fields = [f.name for f in Attempt._meta.fields]

    @admin.display(description="delivery")
    def delivery_link(self, attempt: Attempt) -> str:
        url = reverse("admin:notifications_delivery_change", args=[quote(attempt.delivery_id)])
        return format_html('<a href="{}">{}</a>', url, attempt.delivery_id)
