"""Which account an e-mail address may find.

Anyone can type any address at sign-up or in the profile, so an address on an account is
only its holder's claim until the holder shows they receive mail there: by following the
confirmation link sent to it, or by setting their password through a link sent to it (a
password reset, an invitation). An address a course's staff gave when they created the
account for it (roster import, "add by e-mail") counts too: nobody but the owner of the
mailbox can sign in to that account (it has no usable password until one is set through a
link sent there: the invitation, or "Forgot your password?", which sends one to such an
account and to no other account without a usable password, such as an LMS's).
So does the address an LMS gives at a launch when an administrator has marked that LMS
as verifying its users' addresses (``lti.models.Platform.verifies_emails``), for the
account that LMS launched only.

Only such an address finds an account for someone else: the roster import, "add by
e-mail" on the people page, granting course creation, and the password-reset e-mail when
several accounts give one address. One account at a time holds an address this way.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone


class EmailTrust(models.TextChoices):
    CONFIRMED_BY_LINK = "link", "confirmed through the link sent to it"
    CONFIRMED_BY_PASSWORD = "password", "confirmed by setting the password through a link sent to it"
    GIVEN_BY_STAFF = "staff", "given by a course's staff when they created the account"
    GIVEN_BY_LMS = "lms", "given at a launch by an LMS that verifies its users' addresses"


class TrustedEmail(models.Model):
    """The address that finds this account, while it is still the account's e-mail
    (``user.email``): an address changed since, by whatever path, finds nothing."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="trusted_email"
    )
    email = models.CharField(max_length=254, unique=True, help_text="In its normal form (accounts.identifiers).")
    trust = models.CharField(max_length=10, choices=EmailTrust.choices)
    recorded_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "trusted e-mail address"

    def __str__(self) -> str:
        return f"{self.email} ({self.get_trust_display()})"

    @property
    def confirmed(self) -> bool:
        return self.trust != EmailTrust.GIVEN_BY_STAFF


class EmailRequest(models.Model):
    """The address the account last asked to confirm, until a link confirms an address: a
    confirmation link is bound to it (accounts.services), so asking again, or following any
    link, leaves every earlier link without effect."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="email_request"
    )
    email = models.CharField(max_length=254, help_text="In its normal form (accounts.identifiers).")
    key = models.CharField(max_length=32, help_text="Random, new with every link sent.")
    requested_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "requested e-mail address"

    def __str__(self) -> str:
        return self.email
