"""CSV (and XLSX) downloads: the teaching pages and the API export the same bytes.

``bom`` starts a CSV with the UTF-8 byte-order mark, which Excel on Windows needs to read
it as UTF-8 (without it σ and · come out garbled); other programs ignore it."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from django.http import HttpResponse, StreamingHttpResponse


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
            lines.append(writer.writerow(row))
            if len(lines) >= lines_per_chunk:
                yield "".join(lines)
                lines = []
        if lines:
            yield "".join(lines)

    response = StreamingHttpResponse(chunks(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def wants_excel_bom(request) -> bool:
    """``?excel=1`` (the "for Excel" link) asks for the byte-order mark."""
    return request.GET.get("excel") in ("1", "true", "yes")


def xlsx_response(rows: Iterable[list], filename: str, *, sheet_title: str = "Grades") -> HttpResponse:
    """The rows as one XLSX sheet (openpyxl's write-only mode keeps memory to one row)."""
    from openpyxl import Workbook

    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet(title=sheet_title[:31] or "Grades")
    for row in rows:
        sheet.append(list(row))
    buffer = io.BytesIO()
    workbook.save(buffer)
    response = HttpResponse(
        buffer.getvalue(),
        content_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    )
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
