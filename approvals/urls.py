from django.urls import URLPattern, URLResolver, path

from approvals import views

app_name = "approvals"

urlpatterns: list[URLPattern | URLResolver] = [
    path("webhooks/<slug:provider>/", views.webhook, name="webhook"),
    path("checkout/<str:elicitation_id>/", views.checkout, name="checkout"),
    path("status/<str:elicitation_id>/", views.status, name="status"),
    path("consent/<str:elicitation_id>/", views.consent, name="consent"),
]
