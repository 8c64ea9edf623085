from django.urls import URLPattern, URLResolver

app_name = "approvals"

urlpatterns: list[URLPattern | URLResolver] = []
