from django.apps import AppConfig


class CoursesConfig(AppConfig):
    name = "courses"
    verbose_name = "Courses, enrolments and assignments"

    def ready(self):
        from attnquiz.input_limits import connect_model_guard

        connect_model_guard()  # no model stores NUL or a lone surrogate
