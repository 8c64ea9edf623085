"""The audit benchmark drives two servers together, and the one started second runs a few per cent
ahead whichever it is (its `--control` run). Its figure is the geometric mean of the pairs, with a
95 % interval taken over couples of consecutive pairs, one of each order, so that favour cancels
inside each couple instead of widening the interval (issue 28)."""

from __future__ import annotations

import math

import pytest

from bench.audit import couples_interval


def test_an_order_favour_that_alternates_cancels_to_a_narrow_interval_around_the_cost() -> None:
    # A 4 % cost seen through a 3 % favour for whichever server went second, order alternating.
    ratios = [0.96 * 1.03, 0.96 / 1.03] * 4

    mean, low, high = couples_interval(ratios)

    assert mean == pytest.approx(0.96)
    assert high - low == pytest.approx(0.0, abs=1e-9)  # every couple says the same


def test_the_figure_is_the_geometric_mean_of_every_pair_inside_its_interval() -> None:
    ratios = [0.97, 0.93, 0.99, 0.94, 0.96, 0.95, 0.98, 0.92]

    mean, low, high = couples_interval(ratios)

    assert mean == pytest.approx(math.prod(ratios) ** (1 / len(ratios)))
    assert low < mean < high
    # Four couples: Student's t at 3 degrees of freedom, not the normal's 1.96.
    logs = [math.log(a * b) / 2 for a, b in zip(ratios[::2], ratios[1::2], strict=True)]
    spread = 3.182 * (sum((x - sum(logs) / 4) ** 2 for x in logs) / 3) ** 0.5 / 2
    assert math.log(high) - math.log(mean) == pytest.approx(spread)


def test_one_couple_has_no_interval() -> None:
    mean, low, high = couples_interval([0.95, 0.97])

    assert mean == pytest.approx((0.95 * 0.97) ** 0.5)
    assert (low, high) == (0.0, math.inf)
