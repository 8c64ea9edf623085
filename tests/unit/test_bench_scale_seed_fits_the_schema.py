"""Part 5 of the benchmark seeds its 100,000 rows with raw SQL, which the ORM's defaults do not
reach: a column added to the elicitation table without a database default stopped the whole
`bench/run` (currency, NOT NULL since the operator API). Seeding a few rows here keeps the
benchmark's SQL in step with the schema the migrations build."""

from __future__ import annotations

import pytest

from approvals.models import Elicitation, Payment


@pytest.mark.django_db
def test_the_scale_seed_inserts_rows_the_current_schema_accepts() -> None:
    from bench.scale import seed

    seeded = seed(40)

    rows = Elicitation.objects.filter(pk__startswith="el_scale_")
    assert rows.count() == 40
    assert seeded["by_status"]["pending"] >= 40
    # 16 of every 20 are payments, each with its Payment row, as the service makes them
    assert rows.filter(kind=Elicitation.Kind.PAYMENT).count() == 32
    assert Payment.objects.filter(elicitation__in=rows).count() == 32
    assert set(rows.values_list("currency", flat=True)) == {""}
