"""Sign-up, sign-in and profile forms. Passwords go through Django's validators."""

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import (
    AuthenticationForm, PasswordChangeForm, PasswordResetForm, SetPasswordForm, UserCreationForm,
)
from django.contrib.auth.password_validation import password_validators_help_texts
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string

from .identifiers import email_normalise, identifier_normalise, name_normalise, username_scripts_refusal
from .selectors import awaits_first_password, user_by_trusted_email, username_lookalike
from .services import email_confirmed_by_password_link, sign_in_failures_clear


class NormalisedEmailField(forms.EmailField):
    """An e-mail in its normal form before it is validated or compared (see identifiers)."""

    def to_python(self, value):
        return email_normalise(super().to_python(value))


class PlainPasswordHelp:
    """Django's password help is HTML; ours is one escaped sentence, so no template needs |safe."""

    password_field = "new_password1"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields[self.password_field].help_text = " ".join(password_validators_help_texts())


class NormalisedNames:
    """First and last names as ``name_normalise`` stores them (no bidi controls or
    zero-width characters: others see the name), the roster import's rule."""

    def _name(self, field: str) -> str:
        name = name_normalise(self.cleaned_data.get(field, ""))
        limit = self._meta.model._meta.get_field(field).max_length
        if len(name) > limit:  # NFC lengthens a few letters ("\u0958")
            raise forms.ValidationError(f"Ensure this value has at most {limit} characters (it has {len(name)}).")
        return name

    def clean_first_name(self):
        return self._name("first_name")

    def clean_last_name(self):
        return self._name("last_name")


class PasswordChangeFormPlain(PlainPasswordHelp, PasswordChangeForm):
    pass


class SetPasswordFormPlain(PlainPasswordHelp, SetPasswordForm):
    """The reset (and invitation) form: a new password set through the link proves the
    mailbox, so the account's sign-in pause ends and its address counts as confirmed."""

    def save(self, commit=True):
        user = super().save(commit=commit)
        if commit:
            sign_in_failures_clear(user=user)
            email_confirmed_by_password_link(user=user)
        return user


class PasswordResetFormTrusted(PasswordResetForm):
    """Django's "forgot your password" form. When an account has confirmed the address,
    only that account is sent a link: others merely giving the address are not.

    Django sends no link to an account without a usable password. One such account is
    sent one here: the account a course's staff made for this address (roster import, "add
    by e-mail"), which has no password until its owner sets one through the mailbox
    (``selectors.awaits_first_password``). An LMS's accounts, which have no usable password
    either and sign in through their LMS, are still sent none.

    The page (``views.PasswordReset``) only validates the address; a worker looks the
    accounts up and mails them (``password_reset_links_send``)."""

    def clean_email(self):
        return email_normalise(self.cleaned_data["email"])

    def get_users(self, email):
        trusted = user_by_trusted_email(email=email)
        if trusted is None:
            return list(super().get_users(email))
        if trusted.is_active and (trusted.has_usable_password() or awaits_first_password(user=trusted)):
            return [trusted]
        return []

    def send_mail(self, subject_template_name, email_template_name, context, from_email, to_email,
                  html_email_template_name=None):
        """Django's, except that a mail server that fails raises (the task tries again
        later) rather than being logged and forgotten."""
        subject = "".join(render_to_string(subject_template_name, context).splitlines())
        body = render_to_string(email_template_name, context)
        message = EmailMultiAlternatives(subject, body, from_email, [to_email])
        if html_email_template_name is not None:
            message.attach_alternative(render_to_string(html_email_template_name, context), "text/html")
        message.send()


def password_reset_links_send(
    *, email: str, domain: str, use_https: bool, subject_template_name: str, email_template_name: str,
) -> None:
    """Mail a link to choose a new password to each account ``email`` finds (none, often).
    ``domain`` (the host the page was asked on) and ``use_https`` make the link's address,
    as Django's own view does from its request. A worker's work: safe to run twice (a second
    link, as if asked twice); raises when the mail server fails."""
    form = PasswordResetFormTrusted(data={"email": email})
    if form.is_valid():
        form.save(
            domain_override=domain, use_https=use_https,
            subject_template_name=subject_template_name, email_template_name=email_template_name,
        )


class LoginForm(AuthenticationForm):
    """Django's sign-in form; the ``username`` field also takes an e-mail address."""

    username = forms.CharField(
        label="Username or e-mail", max_length=254,
        widget=forms.TextInput(attrs={"autofocus": True, "autocomplete": "username"}),
    )
    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": "That username (or e-mail) and password do not match. Please try again.",
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Django sizes the field to the username column (150); an e-mail may be up to 254.
        self.fields["username"].max_length = 254
        self.fields["username"].widget.attrs["maxlength"] = 254


class SignUpForm(NormalisedNames, PlainPasswordHelp, UserCreationForm):
    password_field = "password1"

    email = NormalisedEmailField(
        label="E-mail", max_length=254, help_text="For resetting a forgotten password.",
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email", "first_name", "last_name")

    def clean_username(self):
        # Before Django's own check, so "sam\u200b" meets the existing "sam" (case-insensitively).
        self.cleaned_data["username"] = identifier_normalise(self.cleaned_data.get("username", ""))
        username = super().clean_username()
        if not username:  # empty, or taken (Django has said so)
            return username
        if refusal := username_scripts_refusal(username):
            raise forms.ValidationError(f"This username {refusal}.")
        if username_lookalike(username=username) is not None:
            raise forms.ValidationError(
                "This username looks like an existing one (some letters of other alphabets, "
                "or 1, l and I, look the same); choose another."
            )
        return username

    # No check that another account holds the address: that would tell anyone whether an
    # address has an account. The mailbox is told instead (services.email_verification_send),
    # and an address another account holds never finds this one.


class ProfileForm(NormalisedNames, forms.ModelForm):
    email = NormalisedEmailField(
        label="E-mail", max_length=254,
        help_text="A new address takes effect once you follow the link we send to it.",
    )

    class Meta:
        model = get_user_model()
        fields = ("first_name", "last_name", "email")

    # As at sign-up, no check that another account holds the address: the new address only
    # replaces the old once its link is followed, and another account's is never sent one.
