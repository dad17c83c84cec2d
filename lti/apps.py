from django.apps import AppConfig
from django.db.models.signals import post_save


class LtiConfig(AppConfig):
    name = "lti"
    verbose_name = "LMS integration (LTI 1.3)"

    def ready(self):
        from grading.signals import submission_scored

        from . import receivers

        submission_scored.connect(
            receivers.schedule_score_passback, dispatch_uid="lti.schedule_score_passback"
        )
        post_save.connect(
            receivers.flag_linked_assignment,
            sender="lti.ResourceLink",
            dispatch_uid="lti.flag_linked_assignment",
        )
