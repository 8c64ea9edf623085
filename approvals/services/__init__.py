"""Workflows over elicitation rows, one module a concept. Resolvers, views, admin actions and
Celery tasks call these.

- `opening`: the row for a URL-mode step, idempotent per call, under the person's cap.
- `ending`: `elicitation_end`, the one gate where every row ends, and the end user's answers.
- `staff`: what staff do to a pending row (admin, operator API).
- `expiry`: stale rows expired in bounded batches (the beat).
- `webhooks`: payment-provider deliveries, recorded once and applied.
- `publishing`: the ``approvals.resolved`` event after commit, and sent again when it did not leave.
"""
