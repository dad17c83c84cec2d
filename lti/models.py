"""LTI 1.3 registrations (platforms, deployments, our keys) and what launches map to.

A platform is one LMS registration (issuer + client_id). Launches from it map its
contexts to courses, its resource links to assignments and its users (``sub``) to
Django users; a platform marked ``verifies_emails`` also vouches for the e-mail address
of the users it launches (``lti.services.lti_email_vouch``). ``LoginState`` is the
server-side half of an OIDC login: it makes each state and nonce usable for exactly one
launch.
"""

from django.conf import settings
from django.db import models


class Platform(models.Model):
    name = models.CharField(
        max_length=200, help_text="Shown to admins only, e.g. 'University Moodle'."
    )
    issuer = models.CharField(
        max_length=255, help_text="The platform's 'iss', exactly as it sends it."
    )
    client_id = models.CharField(
        max_length=255, help_text="The client ID the platform gave attnquiz."
    )
    auth_login_url = models.URLField(max_length=500, help_text="OIDC authorisation endpoint.")
    auth_token_url = models.URLField(
        max_length=500, help_text="OAuth2 token endpoint (for grades)."
    )
    jwks = models.JSONField(
        default=dict,
        blank=True,
        help_text='The platform\'s public keyset, {"keys": [...]}, as published by the platform.',
    )
    keyset_url = models.URLField(
        max_length=500,
        blank=True,
        help_text="Optional. When set, an unknown key id makes attnquiz fetch this URL once "
        "and store the result in 'jwks'.",
    )
    verifies_emails = models.BooleanField(
        "This LMS verifies its users' e-mail addresses",
        default=False,
        help_text="Turn on only if no user of this LMS can set an address without proving they "
        "receive mail there. Then the 'email' of a launch from this LMS is trusted to find the "
        "account of the user it launched (the account linked to this registration and the "
        "launch's 'sub'), as a confirmed address is: roster imports and 'add by e-mail' find it. "
        "Never an address another account holds already (confirmed, given by staff or by any "
        "LMS): the first account keeps it, and this one only gives it. Every launch sets the "
        "account's e-mail to the LMS's, as without this, so a new address takes the trust "
        "with it, and an address the person confirmed in attnquiz gives way to the LMS's at "
        "their next launch. A launch saying 'email_verified': false trusts nothing. Turning "
        "this off trusts no new address; those trusted already stay until the account's "
        "e-mail changes.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "client_id"], name="lti_one_registration")
        ]

    def __str__(self):
        return f"{self.name} ({self.issuer}, client {self.client_id})"


class RegistrationLinkUse(models.Model):
    """A registration link (``registration.registration_token_create``) registers one
    platform: claimed as its registration starts, released if the LMS refuses, so a link
    someone else saw cannot add a second platform."""

    link_id = models.CharField(max_length=32, unique=True)
    platform = models.ForeignKey(
        Platform, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    used_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"registration link {self.link_id} ({self.used_at:%Y-%m-%d})"


class Deployment(models.Model):
    platform = models.ForeignKey(Platform, on_delete=models.CASCADE, related_name="deployments")
    deployment_id = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["platform", "deployment_id"], name="lti_deployment_once_per_platform"
            )
        ]

    def __str__(self):
        return f"{self.platform.name}: deployment {self.deployment_id}"


class ToolKey(models.Model):
    """One of attnquiz's RSA key pairs. The newest active key signs; all published ones verify."""

    kid = models.CharField(max_length=64, unique=True)
    private_key_pem = models.TextField()
    is_active = models.BooleanField(
        default=True, help_text="Signs new client assertions. Only the newest active key is used."
    )
    is_published = models.BooleanField(
        default=True, help_text="Listed at /lti/jwks/. Keep a retired key published for a day."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return self.kid


class LoginState(models.Model):
    """One OIDC login in flight: its state and nonce, consumed by the launch that uses them."""

    state = models.CharField(max_length=64, unique=True)
    nonce = models.CharField(max_length=64, unique=True)
    platform = models.ForeignKey(Platform, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    consumed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"login state {self.state[:8]}… for {self.platform.name}"


class LtiContext(models.Model):
    platform = models.ForeignKey(Platform, on_delete=models.CASCADE, related_name="contexts")
    context_id = models.CharField(max_length=255)
    course = models.ForeignKey(
        "courses.Course", on_delete=models.CASCADE, related_name="lti_contexts"
    )
    title = models.CharField(max_length=255, blank=True)
    memberships_url = models.URLField(
        max_length=500, blank=True, help_text="NRPS membership URL of this course, from a launch."
    )
    deployment_id = models.CharField(max_length=255, blank=True)
    roster_synced_at = models.DateTimeField(null=True, blank=True)
    roster_sync_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "LTI context"
        constraints = [
            models.UniqueConstraint(
                fields=["platform", "context_id"], name="lti_context_once_per_platform"
            )
        ]

    def __str__(self):
        return f"{self.platform.name}: {self.title or self.context_id} → {self.course.slug}"


class ResourceLink(models.Model):
    platform = models.ForeignKey(Platform, on_delete=models.CASCADE, related_name="resource_links")
    resource_link_id = models.CharField(max_length=255)
    context = models.ForeignKey(LtiContext, on_delete=models.CASCADE, related_name="resource_links")
    assignment = models.ForeignKey(
        "courses.Assignment",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="lti_resource_links",
    )
    title = models.CharField(max_length=255, blank=True)
    lineitem_url = models.URLField(
        max_length=500, blank=True, help_text="AGS line item of this link, from the last launch."
    )
    lineitems_url = models.URLField(
        max_length=500, blank=True, help_text="AGS line items container of the link's course."
    )
    ags_scopes = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["platform", "resource_link_id"], name="lti_link_once_per_platform"
            )
        ]

    def can_post_scores(self) -> bool:
        return "https://purl.imsglobal.org/spec/lti-ags/scope/score" in (self.ags_scopes or [])

    def can_manage_lineitems(self) -> bool:
        return "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem" in (self.ags_scopes or [])

    def __str__(self):
        target = self.assignment or "not mapped"
        return f"{self.platform.name}: {self.title or self.resource_link_id} → {target}"


class LtiIdentity(models.Model):
    platform = models.ForeignKey(Platform, on_delete=models.CASCADE, related_name="identities")
    sub = models.CharField(max_length=255)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lti_identities"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "LTI identity"
        verbose_name_plural = "LTI identities"
        constraints = [
            models.UniqueConstraint(fields=["platform", "sub"], name="lti_sub_once_per_platform")
        ]

    def __str__(self):
        return f"{self.platform.name}: {self.sub} → {self.user}"


class PassbackStatus(models.TextChoices):
    PENDING = "pending", "Waiting to be sent"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed"


class Passback(models.Model):
    """The outbox of one student's score on one LMS link: what must reach the LMS gradebook.

    Written (or re-armed) in the transaction that changes the score, so no change is lost
    with the broker. ``changed_at`` is the time of the latest change; a send that started
    before a newer change leaves the row pending, and the newer total goes out next.
    """

    link = models.ForeignKey(ResourceLink, on_delete=models.CASCADE, related_name="passbacks")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lti_passbacks"
    )
    status = models.CharField(
        max_length=10, choices=PassbackStatus.choices, default=PassbackStatus.PENDING
    )
    changed_at = models.DateTimeField(help_text="When the score last changed.")
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True, db_index=True)
    claimed_at = models.DateTimeField(
        null=True, blank=True, help_text="Set while one sender is posting this score."
    )
    last_error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    sent_score = models.JSONField(default=dict, blank=True, help_text="The last score sent.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["link", "user"], name="lti_one_passback_per_link_user")
        ]
        indexes = [models.Index(fields=["status", "changed_at"], name="lti_passback_due")]

    def __str__(self):
        return f"{self.user} via {self.link}: {self.get_status_display()}"
