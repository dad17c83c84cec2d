from django.apps import AppConfig


class ExplorationsConfig(AppConfig):
    name = "explorations"
    verbose_name = "Interactive explorations"
