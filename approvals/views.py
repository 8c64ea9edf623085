"""The webhook receiver and the pages a URL-mode elicitation opens (sandbox checkout, status, consent).

The checkout page stands in for a provider's page (a real provider knows none of our users), so
the elicitation's unguessable id is all it needs. The status and consent pages are ours: a
principal only sees and answers its own rows, so they need the row's own user signed in (anyone
else gets 403, even holding the URL, the agent included). The views only parse input and call
`approvals.services`.
"""

from __future__ import annotations

import logging
import secrets

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.log import log_response
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from approvals.models import Elicitation, ElicitationNotPending
from approvals.providers import UnknownProvider, WebhookRejected
from approvals.providers import sandbox as sandbox_provider
from approvals.services.ending import NotYours, consent_give, elicitation_cancel
from approvals.services.webhooks import DuplicateDelivery, webhook_receive
from mcpsite.actors import Actor, Via

logger = logging.getLogger(__name__)


@csrf_exempt
@require_POST
def webhook(request: HttpRequest, provider: str) -> HttpResponse:
    try:
        delivery = webhook_receive(provider=provider, body=request.body, headers=request.headers)
    except UnknownProvider:
        return JsonResponse({"error": "unknown provider"}, status=404)
    except WebhookRejected as exc:
        refused = JsonResponse({"error": exc.reason}, status=400)
        # One line that says why; Django's own "Bad Request" line is then not written.
        log_response("webhook from %s rejected: %s", provider, exc.reason, response=refused, logger=logger)
        return refused
    except DuplicateDelivery:
        return JsonResponse({"received": True, "duplicate": True})
    return JsonResponse({"received": True, "outcome": delivery.outcome, "flagged": delivery.flagged})


@require_http_methods(["GET", "POST"])
def checkout(request: HttpRequest, elicitation_id: str) -> HttpResponse:
    """The sandbox provider's checkout page: Pay delivers a signed webhook, Cancel cancels.

    Either way the payer comes back to this page, which then says how the payment ended and to
    return to their client (already told). Not to the status page: a provider's page knows none of
    our users, so a payer who never signed in here would land on a sign-in form."""
    row = get_object_or_404(
        Elicitation.objects.select_related("tenant", "payment"), pk=elicitation_id, kind=Elicitation.Kind.PAYMENT
    )
    if request.method == "POST" and row.is_pending:
        if request.POST.get("action") == "pay":
            payment = row.payment
            event = sandbox_provider.checkout_completed_event(
                elicitation_id=row.pk,
                provider_reference=f"cs_sandbox_{secrets.token_hex(10)}",
                amount=payment.amount,
                currency=payment.currency,
            )
            body, headers = sandbox_provider.signed_delivery(event)
            webhook_receive(provider=sandbox_provider.SandboxProvider.name, body=body, headers=headers)
        elif request.POST.get("action") == "cancel":
            try:
                elicitation_cancel(elicitation=row, actor=Actor(Via.USER, request.user))
            except ElicitationNotPending:
                pass
        return redirect("approvals:checkout", elicitation_id=row.pk)
    return render(request, "approvals/checkout.html", {"elicitation": row, "payment": row.payment})


def _own_row(request: HttpRequest, elicitation_id: str, **filters: str) -> Elicitation:
    """The signed-in user's row: 404 if there is none, 403 if it is someone else's (or nobody's)."""
    row = get_object_or_404(Elicitation.objects.select_related("tenant"), pk=elicitation_id, **filters)
    if not row.belongs_to(request.user):
        logger.warning("user %s refused on elicitation %s (not its principal)", request.user.pk, row.pk)
        # Shown on the site's 403 page (templates/403.html), which names who is signed in. Whose
        # page it is stays unsaid: the visitor holds a URL, not a right to know who it is for.
        raise PermissionDenied(
            f"This {row.get_kind_display()} page is not yours: only the person it was opened for may see it."
        )
    return row


@require_http_methods(["GET", "HEAD"])
@login_required
def status(request: HttpRequest, elicitation_id: str) -> HttpResponse:
    """Where an elicitation stands; reloads itself while pending."""
    row = _own_row(request, elicitation_id)
    return render(request, "approvals/status.html", {"elicitation": row})


@require_http_methods(["GET", "POST"])
@login_required
def consent(request: HttpRequest, elicitation_id: str) -> HttpResponse:
    row = _own_row(request, elicitation_id, kind=Elicitation.Kind.CONSENT)
    if request.method == "POST" and row.is_pending:
        try:
            consent_give(elicitation=row, user=request.user, agree=request.POST.get("action") == "agree")
        except ElicitationNotPending:
            pass
        except NotYours:
            refused = "This consent page is not yours: only the person it was opened for may answer it."
            raise PermissionDenied(refused) from None
        return redirect("approvals:status", elicitation_id=row.pk)
    return render(request, "approvals/consent.html", {"elicitation": row})
