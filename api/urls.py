"""/api/: the versioned REST API, its OpenAPI schema and docs, and the token page."""

from csp.decorators import csp_update
from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from . import views, views_bank, views_grading, views_teaching, views_tokens
from .problems import not_found

app_name = "api"

COURSE = "v1/courses/<slug:course_slug>/"
ASSIGNMENT = COURSE + "assignments/<slug:assignment_slug>/"
EXERCISE = COURSE + "exercises/<slug:slug>/"
QUESTION = COURSE + "questions/<int:exercise_id>/<slug:part_key>/"

urlpatterns = [
    path("tokens/", views_tokens.token_list, name="tokens"),
    path("tokens/<int:token_id>/revoke/", views_tokens.token_revoke, name="token_revoke"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path(
        "docs/",
        # Swagger UI's stylesheet draws its icons as data: SVG images; scripts stay 'self' only.
        csp_update({"img-src": ["data:"]})(
            SpectacularSwaggerSplitView.as_view(url_name="api:schema", template_name="api/swagger_ui.html")
        ),
        name="docs",
    ),
    # Student
    path("v1/courses/", views.CourseList.as_view(), name="courses"),
    path(COURSE + "assignments/", views.AssignmentList.as_view(), name="assignments"),
    path(ASSIGNMENT, views.AssignmentDetail.as_view(), name="assignment"),
    path(ASSIGNMENT + "attempt/", views.ExamAttempt.as_view(), name="exam_attempt"),
    path("v1/exercises/<int:item_id>/", views.ExerciseDetail.as_view(), name="exercise"),
    path(
        "v1/exercises/<int:item_id>/parts/<slug:part>/submissions/",
        views.SubmitAnswer.as_view(),
        name="submit",
    ),
    path("v1/submissions/<int:submission_id>/", views.SubmissionDetail.as_view(), name="submission"),
    # Teaching staff
    path(ASSIGNMENT + "gradebook/", views_teaching.Gradebook.as_view(), name="gradebook"),
    path(ASSIGNMENT + "gradebook.csv", views_teaching.GradebookCsv.as_view(), name="gradebook_csv"),
    path(ASSIGNMENT + "submissions/", views_teaching.SubmissionExport.as_view(), name="submissions"),
    path(ASSIGNMENT + "analytics/", views_teaching.Analytics.as_view(), name="analytics"),
    path(ASSIGNMENT + "regrades/", views_teaching.RegradeStart.as_view(), name="regrade_start"),
    path(ASSIGNMENT + "release/", views_teaching.GradesRelease.as_view(), name="grades_release"),
    path(COURSE + "regrades/<int:job_id>/", views_teaching.RegradeDetail.as_view(), name="regrade"),
    path(COURSE + "regrades/<int:job_id>/apply/", views_teaching.RegradeApply.as_view(), name="regrade_apply"),
    path(COURSE + "gradebook/", views_teaching.CourseGradebook.as_view(), name="course_gradebook"),
    path(COURSE + "gradebook.csv", views_teaching.CourseGradebookCsv.as_view(), name="course_gradebook_csv"),
    path(COURSE + "roster/", views_teaching.Roster.as_view(), name="roster"),
    # Rubric grading and regrade requests
    path(QUESTION + "rubric/", views_grading.QuestionRubric.as_view(), name="question_rubric"),
    path(QUESTION + "rubric/criteria/", views_grading.RubricCriteria.as_view(), name="rubric_criteria"),
    path(QUESTION + "answers/", views_grading.QuestionAnswers.as_view(), name="question_answers"),
    path(QUESTION + "grades/", views_grading.RubricApply.as_view(), name="rubric_apply"),
    path(COURSE + "rubric-criteria/<int:criterion_id>/", views_grading.RubricCriterion.as_view(), name="rubric_criterion"),
    path(ASSIGNMENT + "regrade-requests/", views_grading.AssignmentRegradeRequests.as_view(), name="regrade_requests"),
    path(
        COURSE + "regrade-requests/<int:request_id>/reply/", views_grading.RegradeRequestReply.as_view(),
        name="regrade_request_reply",
    ),
    path(
        "v1/submissions/<int:submission_id>/regrade-requests/", views_grading.SubmissionRegradeRequests.as_view(),
        name="submission_regrade_requests",
    ),
    # Exercise banks
    path(COURSE + "exercises/", views_bank.ExerciseList.as_view(), name="bank_exercises"),
    path(COURSE + "exercises/validate/", views_bank.ExerciseValidate.as_view(), name="bank_validate"),
    path(EXERCISE + "versions/", views_bank.VersionList.as_view(), name="bank_versions"),
    path(EXERCISE + "versions/<int:number>/", views_bank.VersionDetail.as_view(), name="bank_version"),
    path(
        EXERCISE + "versions/<int:number>/transition/",
        views_bank.VersionTransition.as_view(),
        name="bank_transition",
    ),
    # Anything else under /api/ is a JSON 404, not the site's HTML page.
    re_path(r"^.*$", not_found),
]
