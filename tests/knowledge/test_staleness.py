"""Freshness rules (pure): verification interval, and newer versions within the range."""

from datetime import UTC, datetime, timedelta

from knowledge.staleness import KnownVersion, Verification, freshness

NOW = datetime(2025, 6, 1, tzinfo=UTC)
SPEC = {"gpu": ["H100"], "nccl": ">=2.19, <2.24"}


def check(*, status="published", spec=SPEC, interval=180, verifications=(), known=()):
    return freshness(
        status=status,
        applicability=spec,
        interval_days=interval,
        verifications=list(verifications),
        known=list(known),
        now=NOW,
    )


def days_ago(n):
    return NOW - timedelta(days=n)


def test_a_published_page_never_verified_is_stale():
    result = check()
    assert result.stale and result.reasons == ("never verified",)


def test_fresh_within_the_interval_and_stale_after_it():
    assert not check(verifications=[Verification(days_ago(179))]).stale
    late = check(verifications=[Verification(days_ago(181))])
    assert late.stale and "181 days ago" in late.reasons[0]
    assert late.due_at == days_ago(181) + timedelta(days=180)


def test_the_newest_verification_counts():
    result = check(verifications=[Verification(days_ago(400)), Verification(days_ago(10))])
    assert not result.stale and result.verified_at == days_ago(10)


def test_interval_zero_never_expires():
    assert not check(interval=0, verifications=[Verification(days_ago(3000))]).stale


def test_drafts_and_deprecated_pages_are_never_stale():
    assert not check(status="draft").stale
    assert not check(status="deprecated").stale


def test_a_newer_version_in_range_without_verification_makes_the_page_stale():
    verified = [Verification(days_ago(5), {"nccl": "2.21.5"})]
    known = [
        KnownVersion("nccl", "2.21.5", days_ago(60)),
        KnownVersion("nccl", "2.23.10", days_ago(1)),
    ]
    result = check(verifications=verified, known=known)
    assert result.stale
    assert "NCCL 2.23.10" in result.reasons[0] and "not verified" in result.reasons[0]


def test_versions_outside_the_range_or_older_do_not_matter():
    verified = [Verification(days_ago(5), {"nccl": "2.23.4"})]
    known = [
        KnownVersion("nccl", "2.24.3", days_ago(1)),  # outside <2.24
        KnownVersion("nccl", "2.21.5", days_ago(1)),  # older than verified
        KnownVersion("nccl", "2.23.4", days_ago(1)),  # the verified one
        KnownVersion("cuda", "12.8", days_ago(1)),
    ]  # the page does not constrain CUDA
    assert not check(verifications=verified, known=known).stale


def test_compares_versions_as_versions():
    verified = [Verification(days_ago(5), {"nccl": "2.23.10"})]
    known = [KnownVersion("nccl", "2.23.4", days_ago(1))]  # older, though bigger as a string
    assert not check(verifications=verified, known=known).stale


def test_without_recorded_versions_a_version_first_seen_after_verification_is_newer():
    verified = [Verification(days_ago(10))]
    seen_before = [KnownVersion("nccl", "2.21.5", days_ago(30))]
    seen_after = [KnownVersion("nccl", "2.23.4", days_ago(2))]
    assert not check(verifications=verified, known=seen_before).stale
    assert check(verifications=verified, known=seen_before + seen_after).stale
