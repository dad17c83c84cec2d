"""Sign-up, profile and e-mail confirmation. Password change and reset are Django's own
views (see urls.py) with our templates; the reset page hands its e-mail to a worker."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.sites.shortcuts import get_current_site
from django.http import HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from courses import selectors as course_selectors
from courses.invitations import invitations_accepted
from courses.services import CourseRefused, course_join, join_refusal
from courses.views import join_guesses_refused
from exams.access import attempt_sessions_rebind

from . import selectors, services
from .forms import ProfileForm, SetPasswordFormPlain, SignUpForm, password_reset_links_send
from .identifiers import email_normalise

BACKEND = "accounts.backends.UsernameOrEmailBackend"


def _safe_next(request) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return ""


def join_after_sign_in(request, *, user, code: str):
    """Enrol a person who came through a join link; the outcome becomes a message. Returns
    the enrolment, or None when refused."""
    try:
        enrolment = course_join(code=code, user=user)
    except CourseRefused as refused:
        messages.error(request, refused.message)
        return None
    messages.success(request, f"You are enrolled in {enrolment.course.title}.")
    return enrolment


@require_http_methods(["GET", "POST"])
def signup(request):
    if not getattr(settings, "ACCOUNT_SIGNUP_OPEN", True):
        return render(request, "accounts/signup_closed.html", status=403)
    if request.user.is_authenticated:
        return redirect(_safe_next(request) or "dashboard")
    code = (request.POST.get("join") or request.GET.get("join") or "").strip()[:16]
    if code and (refused := join_guesses_refused(request)):
        return refused
    course = course_selectors.course_by_join_code(code=code) if code else None
    if course is not None and join_refusal(course=course):
        course = None
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = services.account_create(form=form)
        if services.verification_required():
            try:
                services.email_verification_send(
                    request=request, user=user, email=user.email, join_code=course.join_code if course else "",
                    signup=True,
                )
            except services.AccountRefused as refused:
                messages.error(request, refused.message)
            return render(request, "accounts/verify_sent.html", {"email": user.email})
        login(request, user, backend=BACKEND)
        # The account is usable at once; its address finds it for others once confirmed.
        try:
            services.email_verification_send(request=request, user=user, email=user.email)
        except services.AccountRefused as refused:
            messages.error(request, f"{refused.message} (Your profile can send the confirmation link again.)")
        else:
            messages.info(request, f"We sent a link to {user.email}: follow it to confirm your e-mail address.")
        enrolment = None
        if course is not None:
            enrolment = join_after_sign_in(request, user=user, code=course.join_code)
        else:
            messages.success(request, f"Welcome, {user.get_username()}.")
        # Came through a join link: the course it joined (a safe ``next`` still wins).
        return redirect(_safe_next(request) or (_course_url(enrolment) if enrolment else "dashboard"))
    return render(
        request, "accounts/signup.html",
        {"form": form, "course": course, "next": _safe_next(request)},
        status=422 if form.errors else 200,
    )


@require_http_methods(["GET", "POST"])
def verify_email(request, token: str):
    """The confirmation link: GET names the address and the account and asks; the button
    (POST) confirms. A link opened by a mail scanner, or by someone who did not ask for it,
    confirms nothing."""
    token = token[:2000]
    try:
        confirmation = services.email_confirmation_read(token=token)
        if request.method == "GET":
            return render(request, "accounts/verify_confirm.html", {"confirmation": confirmation})
        user, code = services.email_verify(token=token)
    except services.AccountRefused as refused:
        return render(request, "accounts/verify_failed.html", {"message": refused.message}, status=400)
    if request.user.is_authenticated and request.user.pk != user.pk:
        # Signed in to another account: say whose address it was, and stay off the profile,
        # which is the signed-in account's.
        messages.success(request, f"The e-mail {user.email} of the account {user.get_username()} is confirmed.")
        if code:
            try:
                enrolment = course_join(code=code, user=user)
            except CourseRefused as refused:
                messages.error(request, refused.message)
            else:
                messages.success(request, f"The account {user.get_username()} is enrolled in {enrolment.course.title}.")
        return redirect("dashboard")
    messages.success(request, f"Your e-mail {user.email} is confirmed.")
    # Came through a join link: the course it joined, after signing in if need be.
    enrolment = join_after_sign_in(request, user=user, code=code) if code else None
    if request.user.is_authenticated:
        return redirect(_course_url(enrolment) if enrolment else "profile")
    if enrolment is not None:
        return redirect(f"{reverse('login')}?next={_course_url(enrolment)}")
    return redirect("login")


def _course_url(enrolment) -> str:
    """/courses/<slug>/, which leads each role to its page of the course."""
    return reverse("courses:home", args=[enrolment.course.slug])


@login_required
@require_http_methods(["GET", "POST"])
def profile(request):
    user = request.user
    old_email = user.email
    form = ProfileForm(request.POST or None, instance=user)
    if request.method == "POST" and form.is_valid():
        new_email = form.cleaned_data["email"]
        # Whatever ACCOUNT_EMAIL_VERIFICATION says: anyone can type anyone's address, so
        # the new one replaces the old only once its owner follows the link sent to it.
        form.instance.email = old_email
        form.save()
        messages.success(request, "Saved your profile.")
        if email_normalise(new_email) != email_normalise(old_email):
            try:
                services.email_verification_send(request=request, user=user, email=new_email)
            except services.AccountRefused as refused:
                messages.error(request, refused.message)
            else:
                messages.info(
                    request,
                    f"We sent a link to {new_email}; your e-mail changes to it once you follow the link"
                    + (f" (until then it stays {old_email})." if old_email else "."),
                )
        return redirect("profile")
    user.refresh_from_db()
    return render(
        request, "accounts/profile.html",
        {
            "form": form,
            "email_trust": selectors.email_trust(user=user),
            "enrolments": course_selectors.enrolments_for_user(user=user),
            "may_create_courses": course_selectors.may_create_courses(user=user),
        },
        status=422 if form.errors else 200,
    )


@login_required
@require_POST
def email_confirmation_send(request):
    """The profile's "send me a confirmation link" for the account's current address."""
    user = request.user
    if not user.email:
        messages.error(request, "Your account has no e-mail address to confirm.")
    elif (trust := selectors.email_trust(user=user)) is not None and trust.confirmed:
        messages.info(request, f"Your e-mail {user.email} is confirmed already.")
    else:
        try:
            services.email_verification_send(request=request, user=user, email=user.email)
        except services.AccountRefused as refused:
            messages.error(request, refused.message)
        else:
            messages.info(request, f"We sent a link to {user.email}: follow it to confirm your e-mail address.")
    return redirect("profile")


class PasswordChange(auth_views.PasswordChangeView):
    """Django's, except that an exam bound to this browser's session stays bound: the
    change gives the session a new key (``update_session_auth_hash``)."""

    def form_valid(self, form):
        old_key = self.request.session.session_key
        response = super().form_valid(form)
        attempt_sessions_rebind(old_key=old_key, new_key=self.request.session.session_key)
        return response


class PasswordReset(auth_views.PasswordResetView):
    """Django's "forgot your password" page, which looks no account up: the address and what
    the link's address needs go to a worker, which mails each account the address finds
    (``forms.password_reset_links_send``). A known address and an unknown one cost the
    request the same work, so neither its answer nor its time says which it was."""

    def form_valid(self, form):
        link = {
            "email": form.cleaned_data["email"],
            "domain": get_current_site(self.request).domain,
            "use_https": self.request.is_secure(),
            "subject_template_name": self.subject_template_name,
            "email_template_name": self.email_template_name,
        }
        services.account_email_hand_off(
            task=services.PASSWORD_RESET_TASK, args=list(link.values()),
            send_here=lambda: password_reset_links_send(**link),
        )
        return HttpResponseRedirect(self.get_success_url())


class SpentLinkRefused:
    """For Django's set-password views: a link that does not work (used, expired, altered)
    is a refused request, so its page ("That link did not work") comes with 400, as a
    failed e-mail confirmation does, not 200."""

    def render_to_response(self, context, **response_kwargs):
        if not context.get("validlink", True):
            response_kwargs["status"] = 400
        return super().render_to_response(context, **response_kwargs)


class PasswordResetConfirm(SpentLinkRefused, auth_views.PasswordResetConfirmView):
    """The password-reset link: Django's view (token checked, single use, expiring)."""

    form_class = SetPasswordFormPlain
    success_url = reverse_lazy("password_reset_complete")


class InvitationAccept(SpentLinkRefused, auth_views.PasswordResetConfirmView):
    """The invitation link: Django's set-password view (token checked, single use, expiring),
    which also records that the person accepted their invitations, signs them in and opens
    the course they were invited to.

    Only a person with a pending invitation is signed in here; a plain password-reset link
    pasted into this address sets the password as the reset page would, and no more."""

    form_class = SetPasswordFormPlain
    template_name = "registration/invitation_accept.html"
    success_url = reverse_lazy("password_reset_complete")

    def form_valid(self, form):
        response = super().form_valid(form)  # the password is saved: the link is spent
        course = invitations_accepted(user=form.user)
        if course is None:
            return response
        login(self.request, form.user, backend=BACKEND)
        return _invited_course_redirect(self.request, user=form.user, course=course)


def _invited_course_redirect(request, *, user, course):
    if course_selectors.course_role(user=user, course=course) is None:  # removed since the e-mail
        messages.success(request, "Your password is set and you are signed in.")
        return redirect("dashboard")
    messages.success(request, f"Your password is set. Welcome to {course.title}.")
    return redirect("courses:home", course.slug)
