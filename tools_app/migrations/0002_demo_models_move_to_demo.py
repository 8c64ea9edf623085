"""The demo toolsets' models now belong to the `demo` app (`demo.0001` took them, tables and all):
the framework's state lets them go; nothing in the database changes."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("tools_app", "0001_initial"),
        ("demo", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="File"),
                migrations.DeleteModel(name="Folder"),
                migrations.DeleteModel(name="Booking"),
            ],
            database_operations=[],
        ),
    ]
