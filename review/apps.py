from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Spaced review"

    def ready(self):
        from exams.signals import grades_became_visible
        from grading.signals import submission_scored

        from . import receivers

        submission_scored.connect(
            receivers.schedule_review, dispatch_uid="review.schedule_review"
        )
        grades_became_visible.connect(
            receivers.review_newly_visible, dispatch_uid="review.review_newly_visible"
        )
