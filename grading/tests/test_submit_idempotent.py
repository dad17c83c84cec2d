"""A retried answer (its response lost on the way) is stored once: the Idempotency-Key."""

import pytest
from django.urls import reverse

from grading import services
from grading.models import Submission, SubmissionStatus

from .test_services import as_text, reference

KEY = "answer-0001-retry"


@pytest.fixture
def submit(django_capture_on_commit_callbacks):
    def create(**kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return services.submission_create(**kwargs)

    return create


@pytest.fixture
def logged_in(client, variant):
    assert client.login(username="student1", password="attention-demo")
    return client


def test_a_retry_with_the_same_key_returns_the_stored_answer(submit, variant, student):
    wrong = as_text(reference(variant, "weights") + 0.1)
    first = submit(variant=variant, student=student, part="weights", raw_answer=wrong, client_key=KEY)
    again = submit(variant=variant, student=student, part="weights", raw_answer=wrong, client_key=KEY)
    assert again.pk == first.pk
    assert getattr(again, "replayed", False) is True
    assert Submission.objects.filter(variant=variant, part="weights").count() == 1
    assert again.attempt == 1


def test_a_retry_of_the_last_attempt_is_not_refused(submit, variant, student):
    assignment = variant.assignment_item.assignment
    assignment.attempts_per_part = 1
    assignment.save()
    wrong = as_text(reference(variant, "weights") + 0.1)
    first = submit(variant=variant, student=student, part="weights", raw_answer=wrong, client_key=KEY)
    assert submit(variant=variant, student=student, part="weights", raw_answer=wrong, client_key=KEY).pk == first.pk
    with pytest.raises(services.SubmissionRefused) as refused:  # a new answer: no attempt left
        submit(variant=variant, student=student, part="weights", raw_answer=wrong, client_key="another-key-2")
    assert refused.value.code == "no_attempts"


def test_a_new_key_is_a_new_attempt(submit, variant, student):
    submit(variant=variant, student=student, part="weights",
           raw_answer=as_text(reference(variant, "weights") + 0.1), client_key=KEY)
    second = submit(variant=variant, student=student, part="weights",
                    raw_answer=as_text(reference(variant, "weights") + 0.2), client_key="answer-0002")
    assert second.attempt == 2
    assert Submission.objects.filter(variant=variant, part="weights").count() == 2


def test_without_a_key_every_new_answer_is_a_new_attempt(submit, variant, student):
    # (The same answer again is refused whatever its key: test_submit_unchanged.)
    submit(variant=variant, student=student, part="weights", raw_answer=as_text(reference(variant, "weights") + 0.1))
    assert submit(variant=variant, student=student, part="weights",
                  raw_answer=as_text(reference(variant, "weights") + 0.2)).attempt == 2


@pytest.mark.parametrize(
    ("part", "answer_offset"),
    [("weights", 0.2), ("output", 0.1)],  # another answer; another part
)
def test_a_key_reused_for_another_answer_is_refused(submit, variant, student, part, answer_offset):
    submit(variant=variant, student=student, part="weights",
           raw_answer=as_text(reference(variant, "weights") + 0.1), client_key=KEY)
    with pytest.raises(services.SubmissionRefused) as refused:
        submit(variant=variant, student=student, part=part,
               raw_answer=as_text(reference(variant, part) + answer_offset), client_key=KEY)
    assert refused.value.code == "key_reused"
    assert Submission.objects.filter(variant=variant).count() == 1


def test_the_page_retry_answers_the_same_submission(logged_in, variant):
    url = reverse("submit", args=[variant.pk, "weights"])
    right = as_text(reference(variant, "weights"))
    pages = [
        logged_in.post(url, {"answer": right}, HTTP_HX_REQUEST="true", HTTP_IDEMPOTENCY_KEY=KEY)
        for _ in range(2)
    ]
    stored = Submission.objects.get(variant=variant, part="weights")
    assert [page.status_code for page in pages] == [200, 200]
    poll = f'hx-get="/grading/submissions/{stored.pk}/?wait=1"'
    assert all(poll in page.content.decode() for page in pages)
    assert (stored.attempt, stored.status, stored.client_key) == (1, SubmissionStatus.QUEUED, KEY)


@pytest.mark.parametrize("key", ["short", "x" * 65, "has space1", "semi;colon", "ünïcödé-key"])
def test_a_malformed_key_is_a_400_and_stores_nothing(logged_in, variant, key):
    response = logged_in.post(
        reverse("submit", args=[variant.pk, "weights"]), {"answer": as_text(reference(variant, "weights"))},
        HTTP_HX_REQUEST="true", HTTP_IDEMPOTENCY_KEY=key,
    )
    assert response.status_code == 400
    assert "8 to 64 letters" in response.content.decode()
    assert Submission.objects.count() == 0


def test_the_form_field_names_the_answer_too(logged_in, variant):
    url = reverse("submit", args=[variant.pk, "weights"])
    form = {"answer": as_text(reference(variant, "weights") + 0.1), "submission_key": KEY}
    for _ in range(2):
        assert logged_in.post(url, form, HTTP_HX_REQUEST="true").status_code == 200
    assert Submission.objects.filter(variant=variant).count() == 1
