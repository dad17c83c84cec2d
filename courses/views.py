"""Course pages: create, settings (join link, archive, LMS), copy, people, roster import,
and joining by code. Thin: every fetch goes through an ``access_*`` selector and every
write through a service."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from attnquiz.confirmations import ConfirmationNeeded, confirmation_shown, confirmed_of

from .middleware import allowed_when_archived
from . import invitations, selectors, selectors_people, services, services_people
from .forms import CopyForm, CourseForm, JoinCodeForm, JoinSettingsForm, PersonAddForm, RosterForm
from .models import EnrolmentSource, Role


def _instructor_post(request, role: str) -> None:
    if request.method == "POST":
        selectors.require_instructor(role=role)


def _settings_context(request, course, role, *, form=None, join_form=None) -> dict:
    join_url = (
        request.build_absolute_uri(reverse("courses:join", args=[course.join_code]))
        if course.join_code else ""
    )
    return {
        "course": course,
        "role": role,
        "is_instructor": role == Role.INSTRUCTOR,
        "form": form or CourseForm(instance=course, editing=True),
        "join_form": join_form or JoinSettingsForm(
            initial={"join_open": course.join_open, "join_expires_at": course.join_expires_at}
        ),
        "join_url": join_url,
        "join_refusal": services.join_refusal(course=course),
        "may_copy": selectors.may_create_courses(user=request.user) and role == Role.INSTRUCTOR,
        "lti_contexts": course.lti_contexts.select_related("platform"),
    }


@login_required
@require_http_methods(["GET", "POST"])
def course_new(request):
    selectors.require_course_creation(user=request.user)
    form = CourseForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            course = services.course_create(actor=request.user, **form.cleaned_data)
        except services.CourseRefused as refused:
            form.add_error(None, refused.message)
        else:
            messages.success(request, f"Created {course.title}. Share the join link below with your students.")
            return redirect("courses:settings", course.slug)
    return render(request, "courses/course_new.html", {"form": form}, status=422 if form.errors else 200)


@login_required
@require_GET
def course_home(request, course_slug: str):
    """/courses/<slug>/: staff go to the course's teaching page, students to the course's
    section of their courses page (where its assignments are); 404 for anyone not in it."""
    course, role = selectors.access_course(user=request.user, slug=course_slug)
    if role in selectors.STAFF_ROLES:
        return redirect("instructor:course", course.slug)
    return redirect(selectors.course_section_url(course=course))


@login_required
@require_http_methods(["GET", "POST"])
def course_settings(request, course_slug: str):
    course, role = selectors.access_course_staff(user=request.user, slug=course_slug)
    _instructor_post(request, role)
    form = CourseForm(request.POST or None, instance=course, editing=True)
    if request.method == "POST" and form.is_valid():
        try:
            services.course_update(course=course, **form.cleaned_data)
        except services.CourseRefused as refused:
            form.add_error(None, refused.message)
        else:
            messages.success(request, "Saved the course settings.")
            return redirect("courses:settings", course.slug)
    course.refresh_from_db()
    return render(
        request, "courses/settings.html", _settings_context(request, course, role, form=form),
        status=422 if form.errors else 200,
    )


@login_required
@require_POST
def join_settings(request, course_slug: str):
    course, role = selectors.access_course_staff(user=request.user, slug=course_slug, instructor_only=True)
    form = JoinSettingsForm(request.POST)
    if form.is_valid():
        try:
            if request.POST.get("rotate") == "1":
                services.join_code_rotate(course=course)
                messages.success(request, "Made a new join code; the old link no longer works.")
            else:
                services.join_settings_update(
                    course=course, join_open=form.cleaned_data["join_open"],
                    expires_at=form.cleaned_data["join_expires_at"],
                )
                messages.success(request, "Saved how students join.")
        except services.CourseRefused as refused:
            messages.error(request, refused.message)
        return redirect("courses:settings", course.slug)
    return render(
        request, "courses/settings.html", _settings_context(request, course, role, join_form=form),
        status=422,
    )


@allowed_when_archived
@login_required
@require_POST
def course_archive(request, course_slug: str):
    course, role = selectors.access_course_staff(user=request.user, slug=course_slug, instructor_only=True)
    archived = request.POST.get("archived", "1") == "1"
    try:
        services.course_archive(course=course, archived=archived, confirmed=confirmed_of(request.POST))
    except ConfirmationNeeded as needed:
        # Students are sitting an exam: the settings page again with what archiving does to
        # them and a button that confirms it (nothing is changed until then).
        context = _settings_context(request, course, role)
        context["archive_confirmation"] = confirmation_shown(needed)
        return render(request, "courses/settings.html", context)
    messages.success(
        request,
        f"Archived {course.title}: it is read-only now, and its gradebooks can still be exported."
        if archived else f"{course.title} is open again.",
    )
    return redirect("courses:settings", course.slug)


@allowed_when_archived
@login_required
@require_http_methods(["GET", "POST"])
def course_copy(request, course_slug: str):
    course, role = selectors.access_course_staff(user=request.user, slug=course_slug, instructor_only=True)
    selectors.require_course_creation(user=request.user)
    form = CopyForm(request.POST or None, initial={"title": course.title, "slug": f"{course.slug.lower()}-copy"[:50]})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            copy = services.course_copy(
                source=course, actor=request.user, slug=data["slug"], title=data["title"], term=data["term"],
                offset=timedelta(days=data["offset_days"]), copy_staff=data["copy_staff"],
            )
        except services.CourseRefused as refused:
            form.add_error("slug", refused.message)
        else:
            invited = copy.enrolment_invitations.count()
            messages.success(
                request, f"Copied {course.title} to {copy.slug} with {copy.assignments.count()} assignments."
                + (f" {invited} member{'s' * (invited != 1)} of staff invited: each joins when they accept on "
                   "their dashboard." if invited else "")
            )
            return redirect("courses:settings", copy.slug)
    return render(
        request, "courses/copy.html",
        {"course": course, "form": form, "assignments": course.assignments.all()},
        status=422 if form.errors else 200,
    )


@login_required
@require_http_methods(["GET"])
def people(request, course_slug: str):
    """Everyone in the course, 50 a page, filtered and sorted by the query string (see
    ``selectors_people.PeopleQuery``), with the counts of the whole course at the top."""
    course, role = selectors.access_course_staff(user=request.user, slug=course_slug)
    return render(request, "courses/people.html", _people_context(request, course, role, PersonAddForm()))


def _page_number(value) -> int:
    """A page number from the query string; anything that is not one reads as page 1 (as
    on the course gradebook)."""
    try:
        return max(1, min(int(value), 1_000_000))
    except (TypeError, ValueError):
        return 1


def _people_context(request, course, role, form) -> dict:
    query = selectors_people.PeopleQuery.from_request(request.GET)
    page = selectors_people.people_page(course=course, query=query, page=_page_number(request.GET.get("page")))
    is_instructor = role == Role.INSTRUCTOR
    # Where a row's button comes back to: this filter, this page.
    here = query.query_string(page=page.number)
    # Absolute: the page is also shown at the address of a form it answers (add someone,
    # send again), where a bare "?…" would lead elsewhere.
    people_url = reverse("courses:people", args=[course.slug])
    return {
        "course": course,
        "is_instructor": is_instructor,
        "query": query,
        "page": page,
        "enrolments": page.rows,
        "summary": selectors_people.people_summary(course=course),
        "here": here,
        "people_url": people_url,
        "clear_link": f"{people_url}?"
        + selectors_people.PeopleQuery(sort=query.sort, descending=query.descending).query_string(),
        "sort_links": {
            key: f"{people_url}?" + query.query_string(sort=key, descending=key == query.sort and not query.descending)
            for key in selectors_people.SORTS
        },
        "filters": {
            "roles": selectors_people.ROLE_FILTERS, "statuses": selectors_people.STATUS_FILTERS,
            "invitations": {key: words for key, (words, _) in selectors_people.INVITATION_FILTERS.items()},
        },
        "invite_again_count": (
            selectors_people.people_to_invite_again_count(course=course, query=query)
            if is_instructor and not course.is_archived else 0
        ),
        "form": form,
        "pending_invitations": list(selectors.course_invitations_pending(course=course)),
    }


def _back_to_people(request, course):
    """The people page as the row's button was pressed on: its filter and page (read
    again from the query string, never a URL taken from the request)."""
    query = selectors_people.PeopleQuery.from_request(request.GET)
    params = query.query_string(page=_page_number(request.GET.get("page")))
    return redirect(reverse("courses:people", args=[course.slug]) + (f"?{params}" if params else ""))


def _site_url(request) -> str:
    return request.build_absolute_uri("/")


def _add_by_invitation(request, course, form):
    """An e-mail without an account, with "send an invitation" ticked: the account is made
    as the roster import makes it (one row), enrolled (staff made it), and sent the e-mail
    to choose its password. Returns the message, or None after adding the form's error.
    (As before, the message says a new account was made: the people page shows it anyway.)"""
    data = form.cleaned_data
    report = services.roster_import(
        course=course, rows=[{"email": data["identifier"], "role": data["role"], "student_id": data["student_id"]}],
        dry_run=False, actor=request.user, source=EnrolmentSource.MANUAL, invite=True,
    )
    line = report.lines[0]
    if line.action == "error":
        form.add_error("identifier", line.detail)
        return None
    users = get_user_model().objects.filter(pk__in=report.created_user_ids)
    invitations.invitations_send(course=course, users=users, actor=request.user, base_url=_site_url(request))
    if report.invitation_ids:  # the address's account exists after all (it confirmed it meanwhile)
        invitations.enrolment_invitations_email(
            invitations=selectors.course_invitations_by_id(course=course, ids=report.invitation_ids),
            base_url=_site_url(request),
        )
        return _invited_message(shown=line.who, role_label=Role(data["role"]).label.lower(), emailed=True)
    return line.detail.replace(f"; {services.NEW_ACCOUNT_INVITED}", "; invitation sent: its link lets them choose a password")


def _invited_message(*, shown: str, role_label: str, emailed: bool) -> str:
    """What the instructor reads after inviting: the same whoever the account is (its name
    and e-mail are not shown, nor whether it has an address to e-mail)."""
    return (
        f"{shown}: invited ({role_label}); they join the course by answering the invitation"
        + ("; an e-mail tells them about it" if emailed else ": it waits on their page of courses") + "."
    )


@login_required
@require_POST
def person_add(request, course_slug: str):
    """Add someone by username or e-mail: an account already in the course is enrolled
    (again) or changes role at once; any other existing account is invited and joins only
    when its owner accepts (``services.enrolment_add``); an address no account has makes a
    new account, enrolled, when "send an invitation" is ticked."""
    course, role = selectors.access_course_staff(user=request.user, slug=course_slug, instructor_only=True)
    form = PersonAddForm(request.POST)
    if form.is_valid():
        invite = form.cleaned_data["invite"]
        role_label = Role(form.cleaned_data["role"]).label.lower()
        try:
            change = services_people.enrolment_add_asking(
                course=course, identifier=form.cleaned_data["identifier"], role=form.cleaned_data["role"],
                actor=request.user, student_id=form.cleaned_data["student_id"], confirmed=confirmed_of(request.POST),
            )
        except ConfirmationNeeded as needed:
            context = _people_context(request, course, role, form)
            context["person_add_confirmation"] = confirmation_shown(needed)
            return render(request, "courses/people.html", context)
        except services.CourseRefused as refused:
            if invite and "@" in form.cleaned_data["identifier"] and not course.is_archived:
                done = _add_by_invitation(request, course, form)
                if done is not None:
                    messages.success(request, done)
                    return redirect("courses:people", course.slug)
            else:
                form.add_error("identifier", refused.message)
        else:
            if change.is_invitation:
                if invite:
                    invitations.enrolment_invitations_email(invitations=[change.invitation], base_url=_site_url(request))
                # Named as typed this time: never another name the same account was invited by.
                messages.success(request, _invited_message(shown=change.shown, role_label=role_label, emailed=invite))
                return redirect("courses:people", course.slug)
            enrolment = change.enrolment
            sent = ""
            if invite:
                invited = invitations.invitations_send(
                    course=course, users=[enrolment.user], actor=request.user, base_url=_site_url(request)
                )
                sent = "; invitation sent" if invited else "; no invitation: the account has no e-mail address"
            messages.success(
                request,
                f"{enrolment.user.get_username()}: {change.action} ({enrolment.get_role_display().lower()}){sent}.",
            )
            return redirect("courses:people", course.slug)
    return render(request, "courses/people.html", _people_context(request, course, role, form), status=422)


@login_required
@require_POST
def invitation_withdraw(request, course_slug: str, invitation_id: int):
    """The instructor takes back an invitation its person has not answered."""
    course, role = selectors.access_course_staff(user=request.user, slug=course_slug, instructor_only=True)
    invitation = selectors.access_course_invitation(course=course, invitation_id=invitation_id)
    try:
        services.enrolment_invitation_withdraw(invitation=invitation)
    except services.CourseRefused as refused:
        messages.error(request, refused.message)
    else:
        messages.success(request, f"Withdrew the invitation of {invitation.identifier}.")
    return _back_to_people(request, course)


@login_required
@require_POST
def invitation_accept(request, invitation_id: int):
    """The invited person, on their dashboard, accepts: enrolled with the role invited."""
    invitation = selectors.access_own_invitation(user=request.user, invitation_id=invitation_id)
    try:
        enrolment = services.enrolment_invitation_accept(invitation=invitation, user=request.user)
    except services.CourseRefused as refused:
        messages.error(request, refused.message)
        return redirect("dashboard")
    messages.success(
        request, f"You are enrolled in {enrolment.course.title} as {enrolment.get_role_display().lower()}."
    )
    return redirect("courses:home", enrolment.course.slug)


@login_required
@require_POST
def invitation_decline(request, invitation_id: int):
    """The invited person declines: the invitation is gone, nothing of theirs was shown."""
    invitation = selectors.access_own_invitation(user=request.user, invitation_id=invitation_id)
    try:
        services.enrolment_invitation_decline(invitation=invitation, user=request.user)
    except services.CourseRefused as refused:
        messages.error(request, refused.message)
    else:
        messages.success(request, f"Declined the invitation to {invitation.course.title}.")
    return redirect("dashboard")


@login_required
@require_POST
def person_remove(request, course_slug: str, enrolment_id: int):
    course, role = selectors.access_course_staff(user=request.user, slug=course_slug, instructor_only=True)
    enrolment = selectors.access_course_enrolment(course=course, enrolment_id=enrolment_id)
    username = enrolment.user.get_username()
    try:
        outcome = services.enrolment_remove(enrolment=enrolment)
    except services.CourseRefused as refused:
        messages.error(request, refused.message)
    else:
        messages.success(
            request,
            f"Dropped {username}: hidden from the gradebook, every submission kept."
            if outcome == "dropped" else f"Removed {username} from the course staff.",
        )
    return _back_to_people(request, course)


@login_required
@require_POST
def person_invite(request, course_slug: str, enrolment_id: int):
    """Send (again) the invitation e-mail to one person of the course."""
    course, role = selectors.access_course_staff(user=request.user, slug=course_slug, instructor_only=True)
    enrolment = selectors.access_course_enrolment(course=course, enrolment_id=enrolment_id)
    try:
        services_people.invitation_send_to_person(
            course=course, user=enrolment.user, actor=request.user, base_url=_site_url(request)
        )
    except services.CourseRefused as refused:
        messages.error(request, refused.message)
    else:
        messages.success(request, f"Sent {enrolment.user.get_username()} an invitation e-mail.")
    return _back_to_people(request, course)


@login_required
@require_POST
def people_invite_again(request, course_slug: str):
    """Send the invitation again to everyone the page's filter keeps who has not joined yet:
    the first press shows how many it reaches and asks (nothing is sent until confirmed)."""
    course, role = selectors.access_course_staff(user=request.user, slug=course_slug, instructor_only=True)
    query = selectors_people.PeopleQuery.from_request(request.GET)
    try:
        sent = services_people.invitations_send_again(
            course=course, query=query, actor=request.user, base_url=_site_url(request),
            confirmed=confirmed_of(request.POST),
        )
    except ConfirmationNeeded as needed:
        context = _people_context(request, course, role, PersonAddForm())
        context["invite_again_confirmation"] = confirmation_shown(needed)
        return render(request, "courses/people.html", context)
    except services.CourseRefused as refused:
        messages.error(request, refused.message)
    else:
        messages.success(
            request, f"Sent the invitation again to {len(sent)} {'person' if len(sent) == 1 else 'people'}."
        )
    return _back_to_people(request, course)


@login_required
@require_POST
def person_restore(request, course_slug: str, enrolment_id: int):
    course, role = selectors.access_course_staff(user=request.user, slug=course_slug, instructor_only=True)
    enrolment = selectors.access_course_enrolment(course=course, enrolment_id=enrolment_id)
    try:
        services.enrolment_restore(enrolment=enrolment)
    except services.CourseRefused as refused:
        messages.error(request, refused.message)
    else:
        messages.success(request, f"{enrolment.user.get_username()} is enrolled again.")
    return _back_to_people(request, course)


@login_required
@require_http_methods(["GET", "POST"])
def roster(request, course_slug: str):
    course, role = selectors.access_course_staff(user=request.user, slug=course_slug, instructor_only=True)
    form = RosterForm(request.POST or None, request.FILES or None)
    report, problem, text = None, None, ""
    if request.method == "POST" and form.is_valid():
        text = form.cleaned_data["text"]
        dry_run = request.POST.get("apply") != "1"
        try:
            rows = services.roster_rows_from_csv(text)
            report = services.roster_import(
                course=course, rows=rows, dry_run=dry_run, actor=request.user, invite=form.cleaned_data["invite"],
            )
        except services.CourseRefused as refused:
            problem = refused.message
        else:
            if not dry_run:
                invited, told = [], 0
                if form.cleaned_data["invite"]:
                    invited = invitations.invitations_send(
                        course=course, users=get_user_model().objects.filter(pk__in=report.created_user_ids),
                        actor=request.user, base_url=_site_url(request),
                    )
                    told = invitations.enrolment_invitations_email(
                        invitations=selectors.course_invitations_by_id(course=course, ids=report.invitation_ids),
                        base_url=_site_url(request),
                    )
                sent = f"; {len(invited)} invitation{'s' * (len(invited) != 1)} sent" if invited else ""
                if report.invitation_ids:
                    asked = len(report.invitation_ids)
                    sent += (
                        f"; {asked} existing account{'s' * (asked != 1)} invited: enrolled once they accept"
                        + (" (told by e-mail)" if told else "")
                    )
                messages.success(
                    request, f"Imported the roster: {report.changes} change{'s' if report.changes != 1 else ''}{sent}."
                )
    return render(
        request, "courses/roster.html",
        {"course": course, "form": form, "report": report, "problem": problem, "text": text},
        status=422 if (form.errors or problem) else 200,
    )


def join_guesses_refused(request):
    """A 429 page when this address looked up too many join codes, else None."""
    import math

    from axes.helpers import get_client_ip_address

    wait = services.join_code_guess_wait(address=get_client_ip_address(request) or "unknown")
    if not wait:
        return None
    seconds = math.ceil(wait)
    response = render(request, "400.html", {
        "status": 429, "title": "Too many join codes tried",
        "message": f"This network tried many join codes in a short time. Wait {seconds} second"
        f"{'s' * (seconds != 1)} and try again; check the code with your instructor.",
    }, status=429)
    response["Retry-After"] = str(seconds)
    return response


@require_http_methods(["GET", "POST"])
def join(request, code: str):
    """The invite link: anyone may open it; a signed-in person joins with one click, a new
    visitor signs up (and is enrolled by the sign-up) or logs in first."""
    if refused := join_guesses_refused(request):
        return refused
    course = selectors.course_by_join_code(code=code)
    refusal = services.join_refusal(course=course)
    enrolment = None
    if request.user.is_authenticated and course is not None:
        enrolment = selectors.active_enrolments().filter(course=course, user=request.user).first()
    if request.method == "POST" and not refusal:
        if not request.user.is_authenticated:
            return redirect(f"{reverse('login')}?next={request.path}")
        try:
            enrolment = services.course_join(code=code, user=request.user)
        except services.CourseRefused as refused:
            refusal = refused.message
        else:
            messages.success(request, f"You are enrolled in {enrolment.course.title}.")
            return redirect("courses:home", enrolment.course.slug)  # each role to its page of it
    status = 200 if not refusal else (404 if course is None else 403)
    return render(
        request, "courses/join.html",
        {"course": course, "code": code[:16], "refusal": refusal, "enrolment": enrolment},
        status=status,
    )


@login_required
@require_POST
def join_enter(request):
    """The dashboard's “join a course” box."""
    if refused := join_guesses_refused(request):
        return refused
    form = JoinCodeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Type the join code your instructor gave you.")
        return redirect("dashboard")
    try:
        enrolment = services.course_join(code=form.cleaned_data["code"], user=request.user)
    except services.CourseRefused as refused:
        messages.error(request, refused.message)
        return redirect("dashboard")
    messages.success(request, f"You are enrolled in {enrolment.course.title}.")
    return redirect("courses:home", enrolment.course.slug)  # each role to its page of it
