"""Persistent URL-mode elicitations, staff approvals and payments (see the URL-mode issue)."""
