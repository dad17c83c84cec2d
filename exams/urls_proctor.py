from django.urls import path

from . import views_proctor

app_name = "proctor"

A = "<slug:course_slug>/a/<slug:assignment_slug>/"
C = "<slug:course_slug>/accommodations/"

urlpatterns = [
    path(C, views_proctor.course_accommodations, name="course_accommodations"),
    path(C + "new/", views_proctor.course_accommodation_edit, name="course_accommodation_new"),
    path(C + "<int:user_id>/", views_proctor.course_accommodation_edit, name="course_accommodation_edit"),
    path(C + "<int:user_id>/remove/", views_proctor.course_accommodation_remove, name="course_accommodation_remove"),
    path(A + "accommodations/", views_proctor.accommodations, name="accommodations"),
    path(A + "accommodations/new/", views_proctor.accommodation_edit, name="accommodation_new"),
    path(A + "accommodations/import/", views_proctor.accommodations_import, name="accommodations_import"),
    path(A + "accommodations/<int:user_id>/", views_proctor.accommodation_edit, name="accommodation_edit"),
    path(A + "accommodations/<int:user_id>/remove/", views_proctor.accommodation_remove, name="accommodation_remove"),
    path(A + "proctor/", views_proctor.proctor, name="view"),
    path(A + "proctor/rows/", views_proctor.proctor_rows, name="rows"),
    path(A + "proctor/extend/", views_proctor.proctor_extend, name="extend"),
]
