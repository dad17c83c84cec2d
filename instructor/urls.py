from django.urls import path

from . import views, views_gradebook, views_picker, views_pools, views_rubrics

app_name = "instructor"

A = "<slug:course_slug>/a/<slug:assignment_slug>/"
Q = "<slug:course_slug>/grading/<int:item_id>/<slug:part>/"

urlpatterns = [
    path("<slug:course_slug>/", views.course_home, name="course"),
    path("<slug:course_slug>/gradebook/", views_gradebook.course_gradebook, name="course_gradebook"),
    path("<slug:course_slug>/gradebook.csv", views_gradebook.course_gradebook_csv, name="course_gradebook_csv"),
    path("<slug:course_slug>/gradebook.xlsx", views_gradebook.course_gradebook_xlsx, name="course_gradebook_xlsx"),
    path("<slug:course_slug>/gradebook/categories/", views_gradebook.grade_category_add, name="grade_category_add"),
    path(
        "<slug:course_slug>/gradebook/categories/<int:category_id>/",
        views_gradebook.grade_category_edit, name="grade_category_edit",
    ),
    path(
        "<slug:course_slug>/gradebook/assignments/", views_gradebook.assignment_categories_set,
        name="assignment_categories_set",
    ),
    path("<slug:course_slug>/grading/", views_rubrics.grading_home, name="grading"),
    path(Q, views_rubrics.grading_question, name="grading_question"),
    path(Q + "answers/<int:submission_id>/", views_rubrics.grading_answer, name="grading_answer"),
    path(Q + "rubric/", views_rubrics.grading_rubric_edit, name="grading_rubric"),
    path(Q + "apply/", views_rubrics.grading_apply, name="grading_apply"),
    path("<slug:course_slug>/regrade-requests/", views_rubrics.regrade_requests, name="regrade_requests"),
    path(
        "<slug:course_slug>/regrade-requests/<int:request_id>/reply/", views_rubrics.regrade_request_reply,
        name="regrade_request_reply",
    ),
    path("<slug:course_slug>/assignments/new/", views.assignment_new, name="assignment_new"),
    path(A, views.assignment_detail, name="assignment"),
    path(A + "edit/", views.assignment_edit, name="assignment_edit"),
    path(A + "items/add/", views.item_add, name="item_add"),
    path(A + "items/choose/", views_picker.exercise_picker, name="exercise_picker"),
    path(A + "items/preview/<int:version_id>/", views_picker.exercise_preview, name="exercise_preview"),
    path(A + "items/pools/", views.item_pools, name="item_pools"),
    path(A + "items/pool-by-skill/", views_pools.pool_by_skill, name="pool_by_skill"),
    path(A + "items/<int:item_id>/", views.item_update, name="item_update"),
    path(A + "items/<int:item_id>/remove/", views.item_remove, name="item_remove"),
    path(A + "gradebook/", views.gradebook, name="gradebook"),
    path(A + "gradebook.csv", views.gradebook_csv, name="gradebook_csv"),
    path(A + "gradebook.xlsx", views.gradebook_xlsx, name="gradebook_xlsx"),
    path(A + "submissions.csv", views.submissions_csv, name="submissions_csv"),
    path(A + "students/<int:user_id>/", views.student_submissions, name="student"),
    path(A + "analytics/", views.analytics, name="analytics"),
    path(A + "regrade/", views.regrade_new, name="regrade_new"),
    path("<slug:course_slug>/submissions/<int:submission_id>/", views.submission_detail, name="submission"),
    path(
        "<slug:course_slug>/submissions/<int:submission_id>/grade/", views.submission_grade_by_hand,
        name="submission_grade_by_hand",
    ),
    path(
        "<slug:course_slug>/submissions/<int:submission_id>/checker-grade/",
        views.submission_grade_return_to_checker, name="submission_grade_return_to_checker",
    ),
    path("<slug:course_slug>/manual/", views.manual_queue, name="manual_queue"),
    path("<slug:course_slug>/manual/<int:submission_id>/", views.manual_grade, name="manual_grade"),
    path("<slug:course_slug>/regrade/<int:job_id>/", views.regrade_detail, name="regrade"),
    path("<slug:course_slug>/regrade/<int:job_id>/apply/", views.regrade_apply, name="regrade_apply"),
    path("<slug:course_slug>/regrade/<int:job_id>/progress/", views.regrade_progress, name="regrade_progress"),
]
