from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Spaced review"

    def ready(self):
        from grading.events import followup_register

        from . import services

        # Every grade change (and every grade that became visible) counts as a review of its
        # part's card, in the grade's one follow-up task.
        followup_register("review", services.reviews_after_grades)
