from __future__ import annotations

from datetime import UTC, datetime


def aware_datetime(text: str) -> datetime:
    """ISO 8601 date or date-time (also "YYYY-MM-DD HH:MM:SS") as an aware datetime.

    A value without a zone is taken as UTC: cluster logs are nearly always in UTC, and a
    guess in the server's zone would shift runs across days. Raises ValueError on junk.
    """
    value = datetime.fromisoformat(text.strip())
    return value if value.tzinfo else value.replace(tzinfo=UTC)
