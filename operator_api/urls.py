from django.urls import path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.permissions import AllowAny
from rest_framework.routers import SimpleRouter

from operator_api.views import docs
from operator_api.views.audit import ToolCallViewSet
from operator_api.views.elicitations import DeliveryViewSet, ElicitationViewSet
from operator_api.views.keyring import KeyViewSet
from operator_api.views.roles import MemberRoleView, RoleViewSet
from operator_api.views.tasks import TaskViewSet
from operator_api.views.tenants import TenantViewSet

app_name = "operator_api"

router = SimpleRouter()
router.register("elicitations", ElicitationViewSet, basename="elicitation")
router.register("webhook-deliveries", DeliveryViewSet, basename="delivery")
router.register("keys", KeyViewSet, basename="key")
router.register("tenants", TenantViewSet, basename="tenant")
router.register("tasks", TaskViewSet, basename="task")
router.register(r"tenants/(?P<slug>[^/.]+)/roles", RoleViewSet, basename="role")
router.register("audit", ToolCallViewSet, basename="audit")

urlpatterns = [
    # The schema is public: it says what the API does, not anything it holds.
    path(
        "schema/", SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[AllowAny]), name="schema"
    ),
    path("docs/", docs.docs, name="docs"),
    path("tenants/<slug:slug>/members/<str:username>/role/", MemberRoleView.as_view(), name="member-role"),
    *router.urls,
]
