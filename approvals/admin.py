"""Operators' view of elicitations: filter what is pending, decide approvals, inspect webhooks."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.contrib.admin.views.main import ChangeList
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.http import require_POST
from oauth2_provider.models import get_application_model

from approvals import outcomes
from approvals.models import Elicitation, ElicitationEvent, ElicitationNotPending, Payment, WebhookDelivery
from approvals.services.ending import WrongKind
from approvals.services.staff import STAFF_ACTIONS, elicitation_end_by_staff
from mcpsite.actors import Actor, Via
from mcpsite.admin_access import NoAdding, NoDeleting, ViewOnly

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldsetSpec


def name_principals(rows: Iterable[Elicitation]) -> None:
    """Give each row the names staff read (``user_name``, ``app_name``): one query for the users
    (subjects at our issuer are user pks, as `mcpsite.auth` names them) and one for the OAuth
    applications, however many rows (a list page)."""
    rows = list(rows)
    issuer = settings.MCPSITE["ISSUER"]
    pks = {int(r.subject) for r in rows if r.issuer == issuer and r.subject.isdigit()}
    client_ids = {r.client_id for r in rows if r.client_id}
    users = dict(get_user_model().objects.filter(pk__in=pks).values_list("pk", "username")) if pks else {}
    apps = (
        dict(get_application_model().objects.filter(client_id__in=client_ids).values_list("client_id", "name"))
        if client_ids
        else {}
    )
    for row in rows:
        mine = row.issuer == issuer and row.subject.isdigit()
        row.user_name = users.get(int(row.subject), "") if mine else ""  # type: ignore[attr-defined]
        row.app_name = apps.get(row.client_id, "")  # type: ignore[attr-defined]


class NamedChangeList(ChangeList):
    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        name_principals(self.result_list)


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


FLAGGED = "Flagged: money arrived for nothing, look at it"


def flag_of(delivery: WebhookDelivery) -> str:
    """Only a flagged delivery says anything: a boolean column drew a red cross on every
    delivery that was fine, which read as an alarm."""
    return FLAGGED if delivery.flagged else ""


class DeliveryInline(NoAdding, admin.TabularInline):
    model = WebhookDelivery
    fields = readonly_fields = ("received_at", "provider", "event_id", "event_type", "outcome", "flag")
    extra = 0
    can_delete = False

    @admin.display(description="flagged", empty_value="")
    def flag(self, delivery: WebhookDelivery) -> str:
        return flag_of(delivery)


class EventInline(NoAdding, admin.TabularInline):
    model = ElicitationEvent
    verbose_name_plural = "audit trail"
    fields = readonly_fields = ("at", "status", "via", "actor", "oauth_client", "note")
    extra = 0
    can_delete = False


# The detail page's buttons (`_approve`, ...) and the list's actions: staff actions
# (`approvals.services.staff`), each ending the row, auditing it and publishing the completion
# event, exactly as the webhook and the beat task do. Completing a step by hand is not among them:
# it claims what nobody confirmed (money, consent), so it has its own page that says so and asks
# why (`complete_view`).
BUTTONS: dict[str, str] = {f"_{action}": action for action in ("approve", "deny", "cancel", "expire")}


class CompleteByHandForm(forms.Form):
    reason = forms.CharField(
        label="Why complete it by hand",
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="Kept in the audit trail with your name, e.g. where the money arrived instead.",
    )


PAYMENT_FIELDS = ["charge", "description", "provider", "provider_reference"]


@admin.register(Elicitation)
class ElicitationAdmin(NoAdding, NoDeleting, admin.ModelAdmin):
    # Fits 1366 px beside the filters (tests/admin/test_elicitation_pages_fit_1366_px.py): the
    # kind (the tool says it; a filter) and expiry are on the row's page, and the list hides the
    # admin's model sidebar (below).
    list_display = ["id", "tenant", "status", "tool", "user", "application", "sum", "created"]
    list_filter = ["status", "kind", "tenant", AgeFilter, FlaggedFilter]
    list_select_related = ["tenant", "payment"]
    search_fields = ["id", "client_id", "subject", "tool", "reference", "payment__provider_reference"]
    readonly_fields = [f.name for f in Elicitation._meta.fields] + ["page", "user", "application", "sum", "ended"]
    readonly_fields += PAYMENT_FIELDS
    inlines = [DeliveryInline, EventInline]
    actions = ["approve", "deny", "cancel", "expire"]
    change_form_template = "approvals/admin/elicitation_change_form.html"
    show_full_result_count = False  # no COUNT(*) over every row on each page

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return NamedChangeList

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        # The nav sidebar would take a fifth of a 1366-px screen from the columns staff read.
        return super().changelist_view(request, {"is_nav_sidebar_enabled": False, **(extra_context or {})})

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Elicitation | None:
        row = super().get_object(request, object_id, from_field)
        if row is not None:
            name_principals([row])
        return row

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> _FieldsetSpec:
        """Only the sections this row has something in: a pending row has no outcome yet, only a
        payment has payment fields, only an approval about a sum shows it."""
        row: Elicitation = obj
        step = ["id", "tenant", "kind", "status", "tool", "reference", "message", "page"]
        if row.kind != Elicitation.Kind.PAYMENT and row.amount is not None:
            step.append("sum")
        sections: list[Any] = [  # (title, options) pairs; the stubs' invariant types fit no literal list
            (None, {"fields": step}),
            ("Who asked", {"fields": ["user", "application", "client_id", "issuer", "subject"]}),
        ]
        if row.kind == Elicitation.Kind.PAYMENT and hasattr(row, "payment"):
            sections.append(("Payment", {"fields": PAYMENT_FIELDS}))
        sections.append(("Times", {"fields": ["created_at", "expires_at", "completed_at", "published_at"]}))
        if not row.is_pending:
            sections.append(("How it ended", {"fields": ["ended", "completed_by_event", "completed_by_user"]}))
        call = ["args_digest"] if row.is_pending else ["args_digest", "outcome"]
        sections.append(("Call and stored record", {"fields": call, "classes": ["collapse"]}))
        return sections

    def get_inlines(self, request: HttpRequest, obj: Any = None) -> list[type[admin.options.InlineModelAdmin]]:
        inlines: list[type[admin.options.InlineModelAdmin]] = []
        if obj is not None and obj.deliveries.exists():
            inlines.append(DeliveryInline)
        if obj is not None and obj.events.exists():
            inlines.append(EventInline)
        return inlines

    @admin.display(description="user")
    def user(self, row: Elicitation) -> str:
        if not row.subject:
            return "- (public tenant)"
        return getattr(row, "user_name", "") or f"{row.subject} at {row.issuer}"

    @admin.display(description="application", ordering="client_id")
    def application(self, row: Elicitation) -> str:
        if not row.client_id:
            return "-"
        return getattr(row, "app_name", "") or row.client_id

    @admin.display(description="created", ordering="created_at")
    def created(self, row: Elicitation) -> str:
        return timezone.localtime(row.created_at).strftime("%Y-%m-%d %H:%M")

    @admin.display(description="sum")
    def sum(self, row: Elicitation) -> str:
        if row.kind == Elicitation.Kind.PAYMENT:
            payment = getattr(row, "payment", None)
            return f"{payment.amount}\N{NO-BREAK SPACE}{payment.currency}" if payment is not None else "-"
        return f"{row.amount}\N{NO-BREAK SPACE}{row.currency}" if row.amount is not None else "-"

    @admin.display(description="amount")
    def charge(self, row: Elicitation) -> str:
        return f"{row.payment.amount} {row.payment.currency}"

    @admin.display(description="description")
    def description(self, row: Elicitation) -> str:
        return row.payment.description

    @admin.display(description="provider")
    def provider(self, row: Elicitation) -> str:
        return row.payment.provider

    @admin.display(description="provider's checkout id")
    def provider_reference(self, row: Elicitation) -> str:
        return row.payment.provider_reference

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

    @admin.display(description="outcome")
    def ended(self, row: Elicitation) -> str:
        return outcomes.sentence_of(outcomes.outcome_from_json(row.outcome))

    @admin.display(description="page the user opens")
    def page(self, row: Elicitation) -> str:
        return format_html('<a href="{}">{}</a>', row.url, row.url)

    def get_urls(self) -> list[URLPattern]:
        decide = self.admin_site.admin_view(require_POST(self.decide_view))
        complete = self.admin_site.admin_view(self.complete_view)
        return [
            path("<str:elicitation_id>/decide/", decide, name="approvals_elicitation_decide"),
            path("<str:elicitation_id>/complete/", complete, name="approvals_elicitation_complete"),
            *super().get_urls(),
        ]

    def complete_view(self, request: HttpRequest, elicitation_id: str) -> HttpResponse:
        """Complete a pending step by hand: a confirmation page, like the admin's delete
        confirmation, that says nothing was received and asks why; the reason goes to the audit
        trail with the staff member's name (staff action "complete", `elicitation_end_by_staff`)."""
        if not self.has_change_permission(request):
            raise PermissionDenied
        row = get_object_or_404(Elicitation.objects.select_related("tenant", "payment"), pk=unquote(elicitation_id))
        back = reverse("admin:approvals_elicitation_change", args=[quote(row.pk)])
        if not row.is_pending:
            self.message_user(request, f"Nothing to complete: {row.pk} is already {row.status}.", messages.WARNING)
            return HttpResponseRedirect(back)
        form = CompleteByHandForm(request.POST if request.method == "POST" else None)
        if request.method == "POST" and form.is_valid():
            try:
                # Admin views are staff-only (`admin_view`): the user is signed in, never anonymous.
                elicitation_end_by_staff(
                    elicitation=row,
                    action="complete",
                    actor=Actor(Via.STAFF, request.user),
                    note=form.cleaned_data["reason"],
                )
            except ElicitationNotPending as exc:
                self.message_user(request, str(exc), messages.WARNING)
            else:
                self.message_user(
                    request,
                    f"Completed {row.pk} by hand; the waiting client is told. "
                    "The audit trail records that no money was received, your name and your reason.",
                )
            return HttpResponseRedirect(back)
        payment = getattr(row, "payment", None) if row.kind == Elicitation.Kind.PAYMENT else None
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": row,
            "payment": payment,
            "form": form,
            "back": back,
            "title": f"Complete this {row.get_kind_display()} by hand?",
        }
        return TemplateResponse(request, "approvals/admin/elicitation_complete_by_hand.html", context)

    def decide_view(self, request: HttpRequest, elicitation_id: str) -> HttpResponse:
        if not self.has_change_permission(request):
            return HttpResponse(status=403)
        row = get_object_or_404(Elicitation, pk=unquote(elicitation_id))
        action = next((action for button, action in BUTTONS.items() if button in request.POST), None)
        if action is None:
            return HttpResponse("no action chosen", status=400)
        note = request.POST.get("note", "").strip()
        try:
            # Admin views are staff-only (`admin_view`): the user is signed in, never anonymous.
            elicitation_end_by_staff(elicitation=row, action=action, actor=Actor(Via.STAFF, request.user), note=note)
        except (ElicitationNotPending, WrongKind, ValueError) as exc:
            self.message_user(request, str(exc), messages.WARNING)
        else:
            # The id is not the first word: the admin capitalises a message's first letter, and ids
            # (`el_...`) are case-sensitive.
            self.message_user(
                request, f"{STAFF_ACTIONS[action].done.capitalize()} {row.pk}; the waiting client is told."
            )
        return HttpResponseRedirect(reverse("admin:approvals_elicitation_change", args=[quote(row.pk)]))

    def _act(self, request: HttpRequest, queryset: QuerySet[Elicitation], action: str) -> None:
        done = skipped = 0
        for row in queryset.filter(status=Elicitation.Status.PENDING):
            try:
                elicitation_end_by_staff(elicitation=row, action=action, actor=Actor(Via.STAFF, request.user))
            except (ElicitationNotPending, WrongKind, ValueError):
                skipped += 1
            else:
                done += 1
        skipped += queryset.exclude(status=Elicitation.Status.PENDING).count()
        self.message_user(
            request, f"{done} {STAFF_ACTIONS[action].done}; {skipped} skipped (not pending, or another kind)."
        )

    @admin.action(description="Approve selected pending approvals", permissions=["change"])
    def approve(self, request: HttpRequest, queryset: QuerySet[Elicitation]) -> None:
        self._act(request, queryset, "approve")

    @admin.action(description="Deny selected pending approvals", permissions=["change"])
    def deny(self, request: HttpRequest, queryset: QuerySet[Elicitation]) -> None:
        self._act(request, queryset, "deny")

    @admin.action(description="Cancel selected pending elicitations", permissions=["change"])
    def cancel(self, request: HttpRequest, queryset: QuerySet[Elicitation]) -> None:
        self._act(request, queryset, "cancel")

    @admin.action(description="Expire selected pending elicitations", permissions=["change"])
    def expire(self, request: HttpRequest, queryset: QuerySet[Elicitation]) -> None:
        self._act(request, queryset, "expire")


@admin.register(Payment)
class PaymentAdmin(ViewOnly, NoDeleting, admin.ModelAdmin):
    """What was charged where, read-only: amounts change only with the elicitation that opened them."""

    list_display = ["elicitation_link", "amount", "currency", "provider", "provider_reference"]
    list_filter = ["provider", "currency"]
    list_select_related = ["elicitation"]
    search_fields = ["elicitation__id", "provider_reference"]
    readonly_fields = [f.name for f in Payment._meta.fields]

    @admin.display(description="elicitation")
    def elicitation_link(self, payment: Payment) -> str:
        url = reverse("admin:approvals_elicitation_change", args=[quote(payment.elicitation_id)])
        return format_html('<a href="{}">{}</a>', url, payment.elicitation_id)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ViewOnly, NoDeleting, admin.ModelAdmin):  # what a provider sent
    list_display = ["event_id", "provider", "event_type", "outcome", "flag", "elicitation_link", "received_at"]
    list_filter = ["flagged", "outcome", "provider"]
    list_select_related = ["elicitation"]
    search_fields = ["event_id", "elicitation__id"]
    readonly_fields = [f.name for f in WebhookDelivery._meta.fields]

    @admin.display(description="flagged", ordering="flagged", empty_value="")
    def flag(self, delivery: WebhookDelivery) -> str:
        return flag_of(delivery)

    @admin.display(description="elicitation")
    def elicitation_link(self, delivery: WebhookDelivery) -> str:
        if delivery.elicitation_id is None:
            return "-"
        url = reverse("admin:approvals_elicitation_change", args=[quote(delivery.elicitation_id)])
        return format_html('<a href="{}">{}</a>', url, delivery.elicitation_id)
