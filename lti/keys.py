"""The tool's signing keys: low in lti, so the connector and the services both use them.

A key is an RSA key pair stored in ToolKey; the newest active one signs.
"""

from __future__ import annotations

import secrets

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from . import selectors
from .models import ToolKey


def tool_key_create() -> ToolKey:
    """A fresh 2048-bit RSA key pair; it becomes the signing key (the newest active one)."""
    private_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private_key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=serialization.NoEncryption(),
    ).decode()
    return ToolKey.objects.create(kid=secrets.token_hex(16), private_key_pem=pem)


def tool_key_ensure() -> ToolKey:
    """The signing key, created on first need."""
    return selectors.tool_key_signing() or tool_key_create()
