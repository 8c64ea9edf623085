from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("mcpsite", "0006_client_application_type"),
    ]

    operations = [
        migrations.AddField(
            model_name="tenant",
            name="call_quota",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="MCP requests the whole tenant may make per quota window (MCPSITE_CALL_QUOTA_WINDOW_SECONDS); "
                "empty: the site's default (MCPSITE_CALL_QUOTA_PER_TENANT); 0: no limit.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="tenant",
            name="call_quota_per_person",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="MCP requests one person (a user across their OAuth clients; an anonymous caller by address) "
                "may make here per quota window; empty: the site's default (MCPSITE_CALL_QUOTA_PER_PERSON); 0: no limit.",
                null=True,
            ),
        ),
    ]
