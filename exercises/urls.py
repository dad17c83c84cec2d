from django.urls import path

from . import views

urlpatterns = [
    path(
        "courses/<slug:course_slug>/assignments/<slug:assignment_slug>/",
        views.assignment_detail,
        name="assignment",
    ),
    path("exercises/<int:item_id>/", views.exercise_page, name="exercise"),
    path("exercises/<int:item_id>/practice/", views.practice_start, name="practice_start"),
    path("practice/<int:variant_id>/", views.practice_page, name="practice"),
]
