from io import StringIO

from django.core.management import call_command


def test_chapter_numbers_prints_the_worked_example_and_the_table():
    out = StringIO()
    call_command("chapter_numbers", samples=2000, stdout=out)
    lines = {line[:33].strip(): line[33:] for line in out.getvalue().splitlines()}
    assert lines["softmax(raw) (it)"] == "[0.5344 0.0723 0.1966 0.1966]"
    assert lines["softmax(scaled) (it)"] == "[0.3875 0.1425 0.235  0.235 ]"
    assert lines["output, scaled weights (late)"] == "[1.3775 0.6225 1.1326 1.    ]"
    table = [line.split() for line in out.getvalue().splitlines()[-5:]]
    assert [row[0] for row in table] == ["4", "16", "64", "256", "1024"]
    assert [row[-1] for row in table] == ["2.0000", "4.0000", "8.0000", "16.0000", "32.0000"]
