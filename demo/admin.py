from django.contrib import admin

from demo.models import Booking, File, Folder


class FileInline(admin.TabularInline):
    model = File
    extra = 0


@admin.register(Folder)
class FolderAdmin(admin.ModelAdmin):
    list_display = ["path", "tenant"]
    list_filter = ["tenant"]
    list_select_related = ["tenant"]
    inlines = [FileInline]


@admin.register(Booking)
class BookingAdmin(admin.ModelAdmin):
    list_display = ["date", "party_size", "tenant", "created_at"]
    list_select_related = ["tenant"]
    readonly_fields = ["created_at"]
