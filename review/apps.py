from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Spaced review"

    def ready(self):
        from grading.signals import submission_scored

        from . import receivers

        submission_scored.connect(
            receivers.schedule_review, dispatch_uid="review.schedule_review"
        )
