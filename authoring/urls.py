from django.urls import path

from . import views

app_name = "authoring"

urlpatterns = [
    path("<slug:course_slug>/", views.exercise_list, name="list"),
    path("<slug:course_slug>/new/", views.exercise_new, name="new"),
    path("<slug:course_slug>/review-setting/", views.review_setting, name="review_setting"),
    path("<slug:course_slug>/import/", views.exercise_import, name="import"),
    path("<slug:course_slug>/check/", views.source_check, name="check"),
    path("<slug:course_slug>/format/", views.exercise_format, name="format"),
    path("<slug:course_slug>/e/<slug:slug>/", views.exercise_detail, name="exercise"),
    path("<slug:course_slug>/e/<slug:slug>/v<int:number>/", views.version_detail, name="version"),
    path("<slug:course_slug>/e/<slug:slug>/v<int:number>/edit/", views.version_edit, name="edit"),
    path(
        "<slug:course_slug>/e/<slug:slug>/v<int:number>/preview/",
        views.version_preview,
        name="preview",
    ),
    path("<slug:course_slug>/e/<slug:slug>/v<int:number>/test/", views.version_test, name="test"),
    path("<slug:course_slug>/e/<slug:slug>/v<int:number>/preflight/", views.version_preflight, name="preflight"),
    path(
        "<slug:course_slug>/e/<slug:slug>/v<int:number>/export/",
        views.version_export,
        name="export",
    ),
    path(
        "<slug:course_slug>/e/<slug:slug>/v<int:number>/transition/",
        views.version_transition,
        name="transition",
    ),
    path(
        "<slug:course_slug>/e/<slug:slug>/v<int:number>/comment/",
        views.version_comment,
        name="comment",
    ),
]
