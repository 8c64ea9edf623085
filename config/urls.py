from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from oauth2_provider import urls as oauth2_urls
from oauth2_provider import views as oauth2_views

from mcpsite import metrics, oauth, signin, views

# The authorization server: DOT's views (our consent page and vetted, rate-limited registration in front).
oauth2_patterns = [
    path("authorize/", oauth.TenantAuthorizationView.as_view(), name="authorize"),
    path("register/", oauth.RateLimitedRegistrationView.as_view(), name="dcr-register"),
    path(
        "register/<str:client_id>/",
        oauth.VettedRegistrationManagementView.as_view(),
        name="dcr-register-management",
    ),
    *[p for p in oauth2_urls.base_urlpatterns if getattr(p, "name", "") not in {"authorize"}],
]

# Both sign-in pages say when the throttle refuses an attempt (the backend enforces it anyway).
admin.site.login_form = signin.AdminSigninForm

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("metrics", metrics.metrics_view, name="metrics"),  # issue 29: loopback, or MCPSITE_METRICS_TOKEN
    # RFC 8414 metadata at the origin root (the issuer is the site root). The tenants' RFC 9728
    # documents are served by their MCP apps, not here.
    path(
        ".well-known/oauth-authorization-server",
        oauth2_views.OAuthServerMetadataView.as_view(),
        name="oauth-server-metadata",
    ),
    path("o/", include((oauth2_patterns, "oauth2_provider"))),
    path("accounts/login/", auth_views.LoginView.as_view(authentication_form=signin.SigninForm), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("approvals/", include("approvals.urls")),
    path("api/v1/", include("operator_api.urls")),
]
