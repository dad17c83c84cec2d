from django.apps import AppConfig


class MasteryConfig(AppConfig):
    name = "mastery"
    verbose_name = "Mastery per skill"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from grading.events import followup_register

        from . import services

        # Every grade change (and every grade that became visible) records the evidence the
        # student may see, in the grade's one follow-up task.
        followup_register("mastery", services.mastery_record_visible)
