from django.urls import path

from . import views

app_name = "lti"

urlpatterns = [
    path("login/", views.login_initiation, name="login"),
    path("launch/", views.launch, name="launch"),
    path("jwks/", views.jwks, name="jwks"),
    path("links/<int:link_id>/", views.link_map, name="link_map"),
    path("choose-course/<str:token>/", views.course_choice, name="course_choice"),
    path("deep-link/<str:token>/", views.deep_link, name="deep_link"),
    path("courses/<slug:course_slug>/", views.course_lms, name="course_lms"),
    path("register/", views.register, name="register"),
]
