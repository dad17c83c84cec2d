from django.apps import AppConfig


class GradingConfig(AppConfig):
    name = "grading"
    verbose_name = "Submissions and grading"

    def ready(self):
        from django.utils.crypto import salted_hmac

        from grading.core import symbolic

        # Keyed by the deployment's secret: every web and worker process decides an answer at
        # the same points, which no one without the secret can know.
        symbolic.unpredictable_points_key_set(salted_hmac("grading.symbolic.points", "key").digest())
