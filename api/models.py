"""Personal API tokens: a named, expiring, revocable secret with a read or read+write scope.

Only a SHA-256 digest of the secret is stored; the secret itself is shown once, when the
token is created. The secret has 256 bits of randomness, so a plain fast hash is right
(a password hash's work factor protects low-entropy secrets, which this is not).
"""

from django.conf import settings
from django.db import models


class TokenScope(models.TextChoices):
    READ = "read", "Read"
    WRITE = "write", "Read and write"


class ApiToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(
        max_length=16, db_index=True, help_text="The secret's first characters, to find and show it."
    )
    key_hash = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the secret, hex.")
    scope = models.CharField(max_length=10, choices=TokenScope.choices, default=TokenScope.READ)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.name} ({self.prefix}…) of {self.user}"

    @property
    def can_write(self) -> bool:
        return self.scope == TokenScope.WRITE
