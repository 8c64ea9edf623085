"""Part 5: 100,000 pending elicitations on PostgreSQL; the retry round's lookup and the admin list.

1. Seeds the rows in one ``INSERT ... SELECT generate_series`` (a Payment for each payment row,
   like the service creates), spread over the existing tenants, a week of `created_at`, 50
   clients and 5,000 subjects, then ``ANALYZE``.
2. The retry round's lookup, in process: `elicitation_open` exactly as a held
   2026-07-28 retry calls it (the row id from its requestState in `known_ids`), and the reload
   `_wait_for_end` makes around its wait; median of many over random rows, and
   ``EXPLAIN (ANALYZE, BUFFERS)`` of each query it ran.
3. The admin list, ``/admin/approvals/elicitation/`` for a staff user, over HTTP against the
   running server given (median of `--requests` after a warm-up), unfiltered and with filters;
   in process, the SQL each page runs (`CaptureQueriesContext`) and the plan of the heaviest.

Prints one line ``BENCH_RESULT {json}``. Runs with mcpsite's settings:

    python bench/scale.py --rows 100000 --admin-url http://127.0.0.1:PORT
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import secrets
import statistics
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

import httpx2  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from approvals.models import Elicitation  # noqa: E402
from approvals.services.opening import PaymentTerms, elicitation_open  # noqa: E402
from mcpsite.models import Tenant  # noqa: E402
from tools_app.principal import Principal  # noqa: E402

ADMIN_LIST = "/admin/approvals/elicitation/"
# Unfiltered, the operators' usual filters, and a search (reported; no target).
PAGES = {
    "all": "",
    "pending": "?status__exact=pending",
    "pending payments": "?kind__exact=payment&status__exact=pending",
    "one tenant, last day": "?tenant__id__exact={tenant}&age=1d",
}
SEARCH = "?q=user-4242"
STAFF = "bench-staff"

SEED_SQL = """
INSERT INTO approvals_elicitation
  (id, tenant_id, client_id, issuer, subject, tool, args_digest, reference, kind, message, url, status,
   created_at, expires_at, outcome, currency, client_address)
SELECT 'el_scale_' || lpad(i::text, 8, '0'),
       (%(tenants)s::bigint[])[1 + i %% cardinality(%(tenants)s::bigint[])],
       'client-' || (i %% 50), %(issuer)s, 'user-' || (i %% 5000),
       k.tool, md5(i::text), k.prefix || i, k.kind, 'Please pay 20.00 EUR for booking ' || i,
       %(root)s || '/approvals/checkout/el_scale_' || lpad(i::text, 8, '0') || '/', 'pending',
       now() - (i * interval '6 seconds'), now() + interval '1 hour', '{}'::jsonb,
       '',  -- a refund approval's own amount is not seeded; payments keep theirs on approvals_payment
       ''  -- every seeded row has a principal: no caller address is kept
FROM generate_series(1, %(rows)s) AS i
CROSS JOIN LATERAL (
  SELECT CASE WHEN i %% 20 < 16 THEN 'payment' WHEN i %% 20 < 19 THEN 'approval' ELSE 'consent' END AS kind,
         CASE WHEN i %% 20 < 16 THEN 'pay_deposit' WHEN i %% 20 < 19 THEN 'request_refund' ELSE 'share' END AS tool,
         CASE WHEN i %% 20 < 16 THEN 'deposit-' WHEN i %% 20 < 19 THEN 'refund-' ELSE 'consent-' END AS prefix
) AS k
"""
SEED_PAYMENTS_SQL = """
INSERT INTO approvals_payment (elicitation_id, amount, currency, description, provider, provider_reference)
SELECT id, 20.00, 'EUR', 'the deposit', 'sandbox', '' FROM approvals_elicitation
WHERE id LIKE 'el_scale_%%' AND kind = 'payment'
"""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def seed(rows: int) -> dict[str, Any]:
    have = Elicitation.objects.filter(pk__startswith="el_scale_").count()
    started = time.perf_counter()
    if have < rows:
        Elicitation.objects.filter(pk__startswith="el_scale_").delete()
        tenants = list(Tenant.objects.order_by("pk").values_list("pk", flat=True))
        with connection.cursor() as cursor:
            cursor.execute(
                SEED_SQL, {"tenants": tenants, "issuer": settings.SITE_ROOT, "root": settings.SITE_ROOT, "rows": rows}
            )
            cursor.execute(SEED_PAYMENTS_SQL)
            cursor.execute("ANALYZE approvals_elicitation")
            cursor.execute("ANALYZE approvals_payment")
    counts = {s: Elicitation.objects.filter(status=s).count() for s in Elicitation.Status.values}
    return {"rows": rows, "seconds": round(time.perf_counter() - started, 2), "by_status": counts}


def explain(sql: str, params: Any = None) -> str:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def indexes_used(plan: str) -> list[str]:
    return sorted(set(re.findall(r"(?:Index|Index Only|Bitmap Index) Scan(?: Backward)? (?:using|on) (\S+)", plan)))


def timed(fn: Callable[[], Any], times: int) -> dict[str, float]:
    samples = []
    for _ in range(times):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return {"median_ms": statistics.median(samples), "p99_ms": samples[int(len(samples) * 0.99) - 1], "n": times}


def retry_lookup(times: int) -> dict[str, Any]:
    sample = list(
        Elicitation.objects.filter(pk__startswith="el_scale_", kind=Elicitation.Kind.PAYMENT).values(
            "pk", "tenant_id", "client_id", "issuer", "subject", "tool", "args_digest", "reference"
        )[:: max(1, times // 100)][:1000]
    )
    rng = random.Random(7)

    def one() -> Elicitation:
        row = rng.choice(sample)
        found = elicitation_open(
            tenant_id=row["tenant_id"],
            principal=Principal(row["client_id"], row["issuer"], row["subject"]),
            tool=row["tool"],
            args_digest=row["args_digest"],
            kind=Elicitation.Kind.PAYMENT,
            reference=row["reference"],
            message="Please pay",
            payment=PaymentTerms(amount=Decimal("20.00"), currency="EUR"),
            known_ids=[row["pk"]],
        )
        if found.pk != row["pk"]:
            raise RuntimeError(f"the lookup found {found.pk}, not {row['pk']}")
        return found

    def reload() -> None:
        Elicitation.objects.get(pk=rng.choice(sample)["pk"])

    def repeat() -> None:  # a repeated call without requestState (round 1 again): the live row
        row = rng.choice(sample)
        Elicitation.objects.for_call(
            tenant_id=row["tenant_id"],
            principal=Principal(row["client_id"], row["issuer"], row["subject"]),
            tool=row["tool"],
            args_digest=row["args_digest"],
            reference=row["reference"],
        ).live().first()

    for fn in (one, reload, repeat):
        timed(fn, 50)  # warm
    result: dict[str, Any] = {
        "retry_lookup": timed(one, times),
        "reload": timed(reload, times),
        "repeat_call_lookup": timed(repeat, times),
    }
    plans: dict[str, Any] = {}
    for name, fn in (("retry_lookup", one), ("reload", reload), ("repeat_call_lookup", repeat)):
        with CaptureQueriesContext(connection) as ctx:
            fn()
        plans[name] = []
        for query in ctx.captured_queries:
            plan = explain(query["sql"])
            plans[name].append({"sql": query["sql"], "plan": plan, "indexes": indexes_used(plan)})
    result["plans"] = plans
    return result


def staff_user() -> tuple[str, str]:
    password = secrets.token_urlsafe(16)
    user, _ = get_user_model().objects.get_or_create(username=STAFF)
    user.is_staff = user.is_superuser = True
    user.set_password(password)
    user.save()
    return STAFF, password


def page_urls() -> dict[str, str]:
    tenant = Elicitation.objects.filter(pk__startswith="el_scale_").values_list("tenant_id", flat=True).first()
    return {name: ADMIN_LIST + query.format(tenant=tenant) for name, query in PAGES.items()}


def admin_sql(urls: dict[str, str]) -> dict[str, Any]:
    """In process: what each page runs, and the plan of its heaviest query."""
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(get_user_model().objects.get(username=STAFF))
    out: dict[str, Any] = {}
    for name, url in {**urls, "search": ADMIN_LIST + SEARCH}.items():
        client.get(url)  # warm
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(url)
        if response.status_code != 200:
            raise RuntimeError(f"{url} answered {response.status_code}")
        queries = [(float(q["time"]) * 1000, q["sql"]) for q in ctx.captured_queries]
        heaviest_ms, heaviest_sql = max(queries)
        plan = explain(heaviest_sql)
        # The page's rows: newest first, one page (the query an index on the ordering serves).
        list_ms, list_sql = next(
            (ms, sql) for ms, sql in queries if "ORDER BY" in sql and "approvals_elicitation" in sql
        )
        list_plan = explain(list_sql)
        out[name] = {
            "queries": len(queries),
            "sql_ms": round(sum(ms for ms, _ in queries), 2),
            "all": [{"ms": round(ms, 3), "sql": sql} for ms, sql in queries],
            "heaviest": {"ms": heaviest_ms, "sql": heaviest_sql, "plan": plan, "indexes": indexes_used(plan)},
            "list_query": {"ms": list_ms, "sql": list_sql, "plan": list_plan, "indexes": indexes_used(list_plan)},
        }
    return out


def admin_http(base: str, urls: dict[str, str], requests: int) -> dict[str, Any]:
    username, password = staff_user()
    out: dict[str, Any] = {}
    with httpx2.Client(base_url=base, timeout=60) as http:
        login = http.get("/admin/login/?next=/admin/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text)
        if token is None:
            raise RuntimeError(f"no login form: {login.status_code}")
        response = http.post(
            "/admin/login/?next=/admin/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": token.group(1), "next": "/admin/"},
        )
        if response.status_code != 302:
            raise RuntimeError(f"staff login answered {response.status_code}")
        for name, url in {**urls, "search": ADMIN_LIST + SEARCH}.items():
            samples = []
            for i in range(requests + 2):
                started = time.perf_counter()
                response = http.get(url)
                elapsed = (time.perf_counter() - started) * 1000
                if response.status_code != 200 or "result_list" not in response.text:
                    raise RuntimeError(f"{url} answered {response.status_code}")
                if i >= 2:  # two warm-up requests
                    samples.append(elapsed)
            out[name] = {
                "url": url,
                "median_ms": statistics.median(samples),
                "min_ms": min(samples),
                "max_ms": max(samples),
                "n": len(samples),
                "rows_on_page": response.text.count('class="action-select"'),
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--lookups", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=15)
    parser.add_argument("--admin-url", default="", help="a running server; else no HTTP timing")
    parser.add_argument("--skip-seed", action="store_true")
    args = parser.parse_args()
    result: dict[str, Any] = {}
    if not args.skip_seed:
        log(f"seeding {args.rows} pending elicitations")
        result["seed"] = seed(args.rows)
    log("timing the retry round's lookup")
    result["lookup"] = retry_lookup(args.lookups)
    staff_user()
    urls = page_urls()
    log("capturing the admin list's SQL")
    result["admin_sql"] = admin_sql(urls)
    if args.admin_url:
        log("timing the admin list over HTTP")
        result["admin_http"] = admin_http(args.admin_url, urls, args.requests)
    print("BENCH_RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
