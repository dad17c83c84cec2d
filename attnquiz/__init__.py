"""attnquiz: an auto-graded exercise platform for the mathematics of attention."""

from .celery import app as celery_app

__all__ = ("celery_app",)
