"""Operator clients' audit rows record who acted as every audit row of ours does
(`mcpsite.actors.ActedBy`): ``via`` becomes a choice (the admin's earlier "admin" is "staff") and
the OAuth client a change came through is kept."""

from typing import Any

from django.db import migrations, models

VIA_CHOICES = [
    ("client", "the MCP client"),
    ("user", "the person, on a page of ours"),
    ("staff", "staff, in the admin"),
    ("api", "staff, through the operator API"),
    ("command", "a management command"),
    ("webhook", "a payment provider's webhook"),
    ("beat", "the beat"),
    ("migration", "a data migration"),
]


def via_as_choice(apps: Any, schema_editor: Any) -> None:
    events = apps.get_model("operator_api", "OperatorClientEvent").objects
    events.filter(via="admin").update(via="staff")
    events.exclude(via__in=[value for value, _ in VIA_CHOICES]).update(via="command")


class Migration(migrations.Migration):
    dependencies = [
        ("operator_api", "0002_operatorclientevent"),
    ]

    operations = [
        migrations.AddField(
            model_name="operatorclientevent",
            name="oauth_client",
            field=models.CharField(
                blank=True,
                help_text="The client id the change came through, if any.",
                max_length=100,
                verbose_name="OAuth client",
            ),
        ),
        migrations.RunPython(via_as_choice, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="operatorclientevent",
            name="via",
            field=models.CharField(choices=VIA_CHOICES, max_length=40),
        ),
    ]
