"""What happens to approvals and payments that other apps may want to hear of (nothing here
imports its listeners).

Sent inside the transaction that made the change, after the rows are written: a receiver that
writes rows (an outbox) commits or rolls back with the change, and one with a side effect outside
the database defers it with ``transaction.on_commit``, so a rolled-back change sends nothing.
"""

from __future__ import annotations

from django.dispatch import Signal

# A staff approval was opened and waits for a decision. Arguments: ``elicitation``.
approval_pending = Signal()

# Money arrived for nothing (an unknown or ended elicitation, or another amount) and was flagged
# for staff. Arguments: ``delivery`` (the WebhookDelivery), ``amount`` and ``currency`` (as the
# provider's event states them; either may be None).
payment_flagged = Signal()

# Rows ended (completed, declined, cancelled or expired), whoever ended them. Arguments:
# ``elicitation_ids`` (a list of row ids). A durable task waiting on one resumes (`mcp_tasks`).
elicitations_ended = Signal()
