"""A task records the URL-mode steps it is parked on (it used to be found by its state containing
a step's id as text). The tasks parked now get theirs from their state's structure, once."""

from django.db import migrations, models

from tools_app.roundstate import url_steps_of_state


def parked_tasks_wait_on_their_steps(apps, schema_editor):
    Task = apps.get_model("mcp_tasks", "Task")
    Elicitation = apps.get_model("approvals", "Elicitation")
    through = Task.waits_on.through
    alias = schema_editor.connection.alias
    parked = Task.objects.using(alias).filter(status="input_required").exclude(request_state="")
    for task_id, state in parked.values_list("pk", "request_state").iterator():
        steps = Elicitation.objects.using(alias).filter(pk__in=url_steps_of_state(state)).values_list("pk", flat=True)
        through.objects.using(alias).bulk_create([through(task_id=task_id, elicitation_id=pk) for pk in steps])


class Migration(migrations.Migration):

    dependencies = [
        ("approvals", "0008_elicitation_client_address"),
        ("mcp_tasks", "0002_task_client_address"),
    ]

    operations = [
        migrations.AddField(
            model_name="task",
            name="waits_on",
            field=models.ManyToManyField(blank=True, related_name="waiting_tasks", to="approvals.elicitation"),
        ),
        migrations.RunPython(parked_tasks_wait_on_their_steps, migrations.RunPython.noop),
    ]
