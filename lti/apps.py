from django.apps import AppConfig
from django.db.models.signals import post_save


class LtiConfig(AppConfig):
    name = "lti"
    verbose_name = "LMS integration (LTI 1.3)"

    def ready(self):
        from grading.events import grade_changed, grades_release_changed

        from . import receivers

        grade_changed.connect(
            receivers.schedule_score_passback, dispatch_uid="lti.schedule_score_passback"
        )
        grades_release_changed.connect(
            receivers.release_passbacks, dispatch_uid="lti.release_passbacks"
        )
        post_save.connect(
            receivers.flag_linked_assignment,
            sender="lti.ResourceLink",
            dispatch_uid="lti.flag_linked_assignment",
        )
