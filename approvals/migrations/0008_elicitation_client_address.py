from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0007_one_pending_payment_per_user"),
    ]

    operations = [
        migrations.AddField(
            model_name="elicitation",
            name="client_address",
            field=models.CharField(blank=True, max_length=64),
        ),
    ]
