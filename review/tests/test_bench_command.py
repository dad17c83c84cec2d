"""bench_review runs, prints its table and leaves nothing behind."""

from io import StringIO

from django.core.management import call_command

from review.models import ReviewCard, ReviewEntry


def test_bench_review_prints_medians_and_rolls_back(db):
    out = StringIO()
    call_command("bench_review", "--updates", "4", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["measure", "n", "median", "ms"]
    assert [line[:58].strip() for line in lines[1:]] == [
        "review_record, first review (creates the card)",
        "review_record, one more review of a card (end to end)",
        "queries per update (median)",
        "review_record, same submission again (idempotent no-op)",
        "fsrs Scheduler.review_card alone",
        "draw_variant, plain",
        "draw_targeted_variant, no_scaling on weights",
    ]
    # queries of one update of an existing card: a batch of one (reviews_record's fixed reads)
    assert lines[3].split()[-1] == "9.000"
    assert not ReviewCard.objects.exists() and not ReviewEntry.objects.exists()
