# Written by hand: makemigrations cannot name the swappable Application model here
# (django-oauth-toolkit reads OAUTH2_PROVIDER_APPLICATION_MODEL, which mcpsite does not set).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('oauth2_provider', '0022_refreshtoken_token_family_index'),
        ('operator_api', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='OperatorClientEvent',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('at', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('client_id', models.CharField(max_length=100, verbose_name='client id')),
                ('changed', models.JSONField(default=list, help_text='The fields that changed.')),
                ('note', models.TextField(blank=True, help_text="From what to what (a secret only as 'set').")),
                ('via', models.CharField(help_text='admin, command, ...', max_length=40)),
                ('actor', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                ('application', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='operator_events', to='oauth2_provider.application')),
            ],
            options={
                'ordering': ['-at'],
            },
        ),
    ]
