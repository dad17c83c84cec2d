from django.apps import AppConfig


class ApiConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "api"
    verbose_name = "REST API"

    def ready(self):
        from . import schema  # noqa: F401  (registers the token scheme with drf-spectacular)
