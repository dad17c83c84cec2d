"""Account pages. The password views are Django's own (the reset page hands its e-mail to a
worker: views.PasswordReset; a reset link that does not work is a 400:
views.PasswordResetConfirm); their URL names are Django's, so the reset e-mail and the
views' redirects find them; a password change keeps an exam bound to its browser:
views.PasswordChange."""

from django.contrib.auth import views as auth_views
from django.urls import path

from . import views
from .forms import PasswordChangeFormPlain, PasswordResetFormTrusted

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("profile/", views.profile, name="profile"),
    path("profile/confirm-email/", views.email_confirmation_send, name="email_confirmation_send"),
    path("verify/<str:token>/", views.verify_email, name="verify_email"),
    path("password/change/", views.PasswordChange.as_view(form_class=PasswordChangeFormPlain), name="password_change"),
    path("password/change/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path(
        "password/reset/",
        views.PasswordReset.as_view(
            form_class=PasswordResetFormTrusted,
            email_template_name="registration/password_reset_email.txt",
            subject_template_name="registration/password_reset_subject.txt",
        ),
        name="password_reset",
    ),
    path("password/reset/sent/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "password/reset/<uidb64>/<token>/",
        views.PasswordResetConfirm.as_view(),
        name="password_reset_confirm",
    ),
    path("invitation/<uidb64>/<token>/", views.InvitationAccept.as_view(), name="invitation_accept"),
    path("password/reset/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
]
