"""An elicitation's audit rows record who acted as every audit row of ours does
(`mcpsite.actors.ActedBy`): ``source`` is named ``via`` and takes the one list of ways (its stored
values are unchanged; a management command is one more)."""

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


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0009_elicitationevent_source_choices"),
    ]

    operations = [
        migrations.RenameField(model_name="elicitationevent", old_name="source", new_name="via"),
        migrations.AlterField(
            model_name="elicitationevent",
            name="via",
            field=models.CharField(choices=VIA_CHOICES, max_length=40),
        ),
        migrations.AlterField(
            model_name="elicitationevent",
            name="oauth_client",
            field=models.CharField(
                blank=True,
                help_text="The client id the change came through, if any.",
                max_length=100,
                verbose_name="OAuth client",
            ),
        ),
    ]
