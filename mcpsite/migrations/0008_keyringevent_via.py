"""The key ring's audit rows record which way a step came (`mcpsite.actors.Via`), as every audit
row of ours does; earlier rows are given theirs from what they recorded (a client id: the API; a
user: the admin; neither: a command)."""

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


def via_of_earlier_rows(apps: Any, schema_editor: Any) -> None:
    events = apps.get_model("mcpsite", "KeyRingEvent").objects
    events.exclude(oauth_client="").update(via="api")
    events.filter(oauth_client="", actor__isnull=False).update(via="staff")


class Migration(migrations.Migration):
    dependencies = [
        ("mcpsite", "0007_tenant_call_quotas"),
    ]

    operations = [
        migrations.AddField(
            model_name="keyringevent",
            name="via",
            field=models.CharField(choices=VIA_CHOICES, default="command", max_length=40),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="keyringevent",
            name="oauth_client",
            field=models.CharField(
                blank=True,
                help_text="The client id the change came through, if any.",
                max_length=100,
                verbose_name="OAuth client",
            ),
        ),
        migrations.RunPython(via_of_earlier_rows, migrations.RunPython.noop),
    ]
