from django.apps import AppConfig


class InstructorConfig(AppConfig):
    name = "instructor"
    verbose_name = "Assignments, gradebook, regrading and analytics"
