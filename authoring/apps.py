from django.apps import AppConfig


class AuthoringConfig(AppConfig):
    name = "authoring"
    verbose_name = "Exercise authoring and review"
