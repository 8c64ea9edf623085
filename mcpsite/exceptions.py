"""The one base of the errors the core raises on purpose (a refused tenant change, a key ring guard,
a registration refused, JSON nested too deep...), so a caller can tell "the core refused" from a bug
with one ``except``. Each keeps its standard-library base as well (`JSONTooDeep` is still a
`ValueError`), so no existing handler changes."""

from __future__ import annotations


class McpsiteError(Exception):
    """Base of the core's errors (each carries its data: the reason, how long to wait...)."""
