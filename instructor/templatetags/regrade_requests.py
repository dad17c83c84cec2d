"""``{% regrade_box submission %}``: under one of the viewer's own graded answers on the
exercise page (its result and its attempts), their requests for another look with the
replies, and the form to ask. Reads ``visibility`` and ``request`` from the page's context;
the requests of the page's variant are read once per request (one query, none for an
answer without a grade to show)."""

from django import template

from instructor.selectors_rubrics import answer_regrade_requests

register = template.Library()


@register.inclusion_tag("instructor/_regrade_box.html", takes_context=True)
def regrade_box(context, submission):
    request = context.get("request")
    visibility = context.get("visibility")
    answer = None
    if request is not None and visibility is not None and submission.student_id == request.user.pk:
        memo = request.__dict__.setdefault("_regrade_requests_by_variant", {})
        answer = answer_regrade_requests(submission=submission, visibility=visibility, memo=memo)
    return {
        "answer": answer,
        "back": "exercise",
        "collapsed": True,
        "csrf_token": context.get("csrf_token"),
        "times_course": answer.course if answer is not None else None,
    }
