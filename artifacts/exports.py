"""CSV/JSON download responses shared by every list and detail page that exports numbers."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from typing import Any

from django.http import HttpResponse


def csv_response(
    filename: str, header: Sequence[str], rows: Iterable[Sequence[Any]]
) -> HttpResponse:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def json_response(filename: str, payload: Any) -> HttpResponse:
    response = HttpResponse(
        json.dumps(payload, indent=2, default=str), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
