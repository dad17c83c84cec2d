"""CSV (and XLSX) downloads: the teaching pages and the API export the same bytes.

``bom`` starts a CSV with the UTF-8 byte-order mark, which Excel on Windows needs to read
it as UTF-8 (without it σ and · come out garbled); other programs ignore it.

No cell is ever a formula. A text a spreadsheet would read as one (``FORMULA_STARTS``) is
``formula_safe``: a ``NeutralisedText`` that the CSV writes with a leading ``'``, and the
XLSX writes as typed, as a text cell (data type "s" with Excel's quote prefix), so it shows
no apostrophe and is never evaluated. The XLSX writes every other text as a text cell too.

A number reads the same in both: the CSV writes a whole number without a trailing ".0"
(0, 1, 3), as a spreadsheet shows the XLSX's number, and any other as its shortest decimal
(0.25); the rows are rounded once, before either writer sees them. A blank ("") is an empty
cell in both."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from django.http import HttpResponse, StreamingHttpResponse


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


class NeutralisedText(str):
    """A text cell that would read as a formula: as a ``str`` it is the CSV's form, the text
    after a ``'``; ``text`` is the text itself, which the XLSX writes as a text cell."""

    text: str

    def __new__(cls, text: str):
        value = super().__new__(cls, "'" + text)
        value.text = text
        return value


def formula_safe(value) -> str | float | int:
    """Neutralise spreadsheet formulas, but leave plain (e.g. negative) numbers alone."""
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    text = str(value)
    if text[:1] in FORMULA_STARTS:
        try:
            float(text)
        except ValueError:
            return NeutralisedText(text)
    return text


class _Echo:
    def write(self, value):
        return value


def csv_streaming_response(rows: Iterable[list], filename: str, *, lines_per_chunk: int = 200, bom: bool = False):
    """Stream the rows as CSV, a few hundred lines per chunk (one write per row is slow).

    ``rows`` should be a generator (the selectors' ``*_csv_rows``), so memory stays flat."""
    writer = csv.writer(_Echo())

    def chunks():
        lines = ["\ufeff"] if bom else []
        for row in rows:
            lines.append(writer.writerow([csv_cell(value) for value in row]))
            if len(lines) >= lines_per_chunk:
                yield "".join(lines)
                lines = []
        if lines:
            yield "".join(lines)

    response = StreamingHttpResponse(chunks(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def csv_cell(value):
    """A whole float as an integer (``3.0`` -> ``3``, as the XLSX's number reads); any other
    value as it is (``csv`` writes a float as its shortest decimal)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def wants_excel_bom(request) -> bool:
    """``?excel=1`` (the "for Excel" link) asks for the byte-order mark."""
    return request.GET.get("excel") in ("1", "true", "yes")


def xlsx_response(rows: Iterable[list], filename: str, *, sheet_title: str = "Grades") -> HttpResponse:
    """The rows as one XLSX sheet (openpyxl's write-only mode keeps memory to one row).
    Texts are text cells, never formulas (see the module's docstring)."""
    from openpyxl import Workbook

    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet(title=sheet_title[:31] or "Grades")
    for row in rows:
        sheet.append([_xlsx_cell(sheet, value) for value in row])
    buffer = io.BytesIO()
    workbook.save(buffer)
    response = HttpResponse(
        buffer.getvalue(),
        content_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    )
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _xlsx_cell(sheet, value):
    """A text as a text cell (openpyxl would make one starting with "=" a formula), with the
    quote prefix when a spreadsheet would otherwise read it as one; other values as they are."""
    if not isinstance(value, str):
        return value
    from openpyxl.cell import WriteOnlyCell

    text = value.text if isinstance(value, NeutralisedText) else value
    cell = WriteOnlyCell(sheet, value=text)
    cell.data_type = "s"
    if text[:1] in FORMULA_STARTS:
        cell.quotePrefix = True
    return cell
