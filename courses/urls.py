from django.urls import path

from . import views

app_name = "courses"

C = "courses/<slug:course_slug>/"

urlpatterns = [
    path("courses/new/", views.course_new, name="new"),
    path(C, views.course_home, name="home"),
    path(C + "settings/", views.course_settings, name="settings"),
    path(C + "settings/join/", views.join_settings, name="join_settings"),
    path(C + "archive/", views.course_archive, name="archive"),
    path(C + "copy/", views.course_copy, name="copy"),
    path(C + "people/", views.people, name="people"),
    path(C + "people/add/", views.person_add, name="person_add"),
    path(C + "people/roster/", views.roster, name="roster"),
    path(C + "people/invite-again/", views.people_invite_again, name="people_invite_again"),
    path(C + "people/<int:enrolment_id>/remove/", views.person_remove, name="person_remove"),
    path(C + "people/<int:enrolment_id>/restore/", views.person_restore, name="person_restore"),
    path(C + "people/<int:enrolment_id>/invite/", views.person_invite, name="person_invite"),
    path(C + "people/invitations/<int:invitation_id>/withdraw/", views.invitation_withdraw, name="invitation_withdraw"),
    path("invitations/<int:invitation_id>/accept/", views.invitation_accept, name="invitation_accept"),
    path("invitations/<int:invitation_id>/decline/", views.invitation_decline, name="invitation_decline"),
    path("join/", views.join_enter, name="join_enter"),
    path("join/<str:code>/", views.join, name="join"),
]
