from django.contrib import admin
from django.urls import include, path

from mcpsite import views

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("approvals/", include("approvals.urls")),
]
