from __future__ import annotations

from django.db import models

from mcpsite.models import Tenant


class Folder(models.Model):
    """A folder of the demo toolset's per-tenant file tree."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="folders")
    path = models.CharField(max_length=500)

    class Meta:
        db_table = "tools_app_folder"  # made when the demo lived in the framework's app
        constraints = [models.UniqueConstraint(fields=["tenant", "path"], name="folder_path_per_tenant")]

    def __str__(self) -> str:
        return self.path


class File(models.Model):
    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="files")
    name = models.CharField(max_length=255)

    class Meta:
        db_table = "tools_app_file"
        constraints = [models.UniqueConstraint(fields=["folder", "name"], name="file_name_per_folder")]

    def __str__(self) -> str:
        return self.name


class Booking(models.Model):
    """A table booked by the demo toolset's `book_table`."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="bookings")
    date = models.DateField()
    party_size = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "tools_app_booking"

    def __str__(self) -> str:
        return f"{self.party_size} on {self.date}"
