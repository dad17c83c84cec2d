from django.apps import AppConfig


class ExamsConfig(AppConfig):
    name = "exams"
    verbose_name = "Exams: attempts, accommodations and grade release"

    def ready(self):
        from django.contrib.auth.signals import user_logged_out

        from django.db.models.signals import pre_save

        from .access import access_code_store, release_on_sign_out

        # Signing out ends the browser session a one-session exam is bound to.
        user_logged_out.connect(release_on_sign_out, dispatch_uid="exams.release_on_sign_out")
        pre_save.connect(access_code_store, sender="courses.Assignment", dispatch_uid="exams.access_code_store")
