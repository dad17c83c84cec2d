from django.apps import AppConfig


class MasteryConfig(AppConfig):
    name = "mastery"
    verbose_name = "Mastery per skill"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from exams.signals import grades_became_visible
        from grading.signals import submission_scored

        from . import receivers

        submission_scored.connect(receivers.schedule_mastery_update, dispatch_uid="mastery.schedule_mastery_update")
        grades_became_visible.connect(receivers.mastery_newly_visible, dispatch_uid="mastery.mastery_newly_visible")
