from django.contrib import admin

from attnquiz.admin_times import LabelledTimesAdmin

from .models import (
    Deployment,
    LoginState,
    LtiContext,
    LtiIdentity,
    Passback,
    Platform,
    ResourceLink,
    ToolKey,
)


class DeploymentInline(admin.TabularInline):
    model = Deployment
    extra = 1


@admin.register(Platform)
class PlatformAdmin(LabelledTimesAdmin):
    list_display = ["name", "issuer", "client_id", "verifies_emails", "created_at"]
    list_filter = ["verifies_emails"]
    search_fields = ["name", "issuer", "client_id"]
    inlines = [DeploymentInline]


@admin.register(Deployment)
class DeploymentAdmin(LabelledTimesAdmin):
    list_display = ["deployment_id", "platform", "created_at"]
    list_filter = ["platform"]


@admin.register(ToolKey)
class ToolKeyAdmin(LabelledTimesAdmin):
    list_display = ["kid", "is_active", "is_published", "created_at"]
    # The private key never shows in the admin; rotate with `manage.py lti_keys --rotate`.
    fields = ["kid", "is_active", "is_published", "created_at"]
    readonly_fields = ["kid", "created_at"]

    def has_add_permission(self, request):
        return False


@admin.register(LtiContext)
class LtiContextAdmin(LabelledTimesAdmin):
    list_display = ["title", "context_id", "platform", "course", "created_at"]
    list_filter = ["platform"]
    search_fields = ["title", "context_id", "course__slug"]
    raw_id_fields = ["course"]


@admin.register(ResourceLink)
class ResourceLinkAdmin(LabelledTimesAdmin):
    list_display = ["title", "resource_link_id", "platform", "assignment", "updated_at"]
    list_filter = ["platform"]
    search_fields = ["title", "resource_link_id"]
    raw_id_fields = ["context", "assignment"]


@admin.register(LtiIdentity)
class LtiIdentityAdmin(LabelledTimesAdmin):
    list_display = ["sub", "platform", "user", "created_at"]
    list_filter = ["platform"]
    search_fields = ["sub", "user__username", "user__email"]
    raw_id_fields = ["user"]


@admin.register(LoginState)
class LoginStateAdmin(LabelledTimesAdmin):
    list_display = ["platform", "created_at", "consumed_at"]
    readonly_fields = ["state", "nonce", "platform", "created_at", "consumed_at"]


@admin.register(Passback)
class PassbackAdmin(LabelledTimesAdmin):
    """The grade passback outbox: what waits, what was sent, what failed and why."""

    list_display = ["user", "link", "status", "attempts", "changed_at", "sent_at", "last_error"]
    list_filter = ["status", "link__platform"]
    search_fields = ["user__username", "link__resource_link_id", "last_error"]
    readonly_fields = [
        "link", "user", "changed_at", "attempts", "next_attempt_at", "claimed_at",
        "last_error", "sent_at", "sent_score",
    ]
