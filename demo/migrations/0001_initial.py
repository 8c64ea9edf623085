"""The demo toolsets' models, moved from `tools_app` (the framework) with their tables: this
migration only takes them into the `demo` app's state (`tools_app.0002` lets them go), and moves
their content types, so staff keep the permissions they held on them."""

import django.db.models.deletion
from django.db import migrations, models

MODELS = ["booking", "folder", "file"]


def content_types_move(apps, schema_editor, *, old="tools_app", new="demo"):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.using(schema_editor.connection.alias).filter(app_label=old, model__in=MODELS).update(
        app_label=new
    )


def content_types_back(apps, schema_editor):
    content_types_move(apps, schema_editor, old="demo", new="tools_app")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("mcpsite", "0001_initial"),
        ("tools_app", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Booking",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("date", models.DateField()),
                        ("party_size", models.PositiveSmallIntegerField()),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("tenant", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="bookings", to="mcpsite.tenant")),
                    ],
                    options={"db_table": "tools_app_booking"},
                ),
                migrations.CreateModel(
                    name="Folder",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("path", models.CharField(max_length=500)),
                        ("tenant", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="folders", to="mcpsite.tenant")),
                    ],
                    options={"db_table": "tools_app_folder"},
                ),
                migrations.CreateModel(
                    name="File",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("name", models.CharField(max_length=255)),
                        ("folder", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="files", to="demo.folder")),
                    ],
                    options={"db_table": "tools_app_file"},
                ),
                migrations.AddConstraint(
                    model_name="folder",
                    constraint=models.UniqueConstraint(fields=("tenant", "path"), name="folder_path_per_tenant"),
                ),
                migrations.AddConstraint(
                    model_name="file",
                    constraint=models.UniqueConstraint(fields=("folder", "name"), name="file_name_per_folder"),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_move, content_types_back),
    ]
