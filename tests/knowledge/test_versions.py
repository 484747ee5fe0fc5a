"""Versions compare as versions, and ranges read the way engineers write them."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledge.versions import VersionError, VersionRange, compare, newest, version_key


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("2.23.4", "2.23.10"),  # the reason this module exists: not a string comparison
        ("2.9.9", "2.10.0"),
        ("2.21.5+cuda12.4", "2.23.4-1+cuda12.6"),
        ("535.129.03", "550.54.15"),
        ("5.15.0-91-generic", "5.15.0-100-generic"),
        ("23.10-1.1.9.0", "24.07-0.6.1.0"),
        ("28.39.1002", "28.41.1000"),
        ("2.24.0rc1", "2.24.0"),  # a pre-release comes before its release
        ("2.24rc1", "2.24"),
        ("2.23", "2.23.1"),
        ("12.4", "12.10"),
        ("v1.2", "1.3"),
    ],
)
def test_versions_order_component_by_component(older, newer):
    assert compare(older, newer) == -1
    assert compare(newer, older) == 1
    assert version_key(older) < version_key(newer)


@pytest.mark.parametrize(
    ("a", "b"), [("2.23", "2.23.0"), ("2.21.5", "2.21.5+cuda12.4"), ("v2.1", "2.1.0.0")]
)
def test_equal_versions(a, b):
    assert compare(a, b) == 0


@pytest.mark.parametrize("junk", ["", "abc", "latest", "-1", "."])
def test_junk_is_not_a_version(junk):
    with pytest.raises(VersionError):
        version_key(junk)


def test_newest_ignores_junk_and_compares_as_versions():
    assert newest(["2.23.4", "2.23.10", "junk", "2.9.1"]) == "2.23.10"
    assert newest(["junk"]) is None


@pytest.mark.parametrize(
    ("spec", "inside", "outside"),
    [
        (
            ">=2.19, <2.24",
            ["2.19", "2.19.3", "2.23.10", "2.23.4+cuda12.4"],
            ["2.18.6", "2.24", "2.24.3"],
        ),
        ("2.23.*", ["2.23", "2.23.4", "2.23.10"], ["2.22.3", "2.24.0", "2.230.1"]),
        ("==2.21.5", ["2.21.5", "2.21.5+cuda12.2"], ["2.21.4", "2.21.6"]),
        ("2.21.5", ["2.21.5"], ["2.21.50"]),
        ("!=2.20.3", ["2.20.5", "2.19.3"], ["2.20.3"]),
        (">550.54", ["550.54.15", "555.42.02"], ["550.54", "535.183.01"]),
        ("<=5.15.0-91", ["5.15.0-91", "5.4.0-150"], ["5.15.0-100", "6.5.0"]),
        ("", ["anything goes", "2.1"], []),
    ],
)
def test_ranges(spec, inside, outside):
    version_range = VersionRange.parse(spec)
    for v in inside:
        assert version_range.contains(v), f"{v} should be in {spec}"
    for v in outside:
        assert not version_range.contains(v), f"{v} should not be in {spec}"


def test_a_constrained_range_never_contains_junk():
    assert not VersionRange.parse(">=2.19").contains("unknown")


@pytest.mark.parametrize("bad", [">=2.x", "=> 2.19", ">=", ">=2.19,, <abc", ">2.*", "!=2.23.*"])
def test_bad_ranges_are_refused_with_a_reason(bad):
    with pytest.raises(VersionError) as excinfo:
        VersionRange.parse(bad)
    assert str(excinfo.value)


def test_ranges_print_canonically():
    assert str(VersionRange.parse(" >=2.19 ,<2.24 ")) == ">=2.19, <2.24"
    assert str(VersionRange.parse("2.23.*")) == ">=2.23, <2.24"
    assert VersionRange.parse(">=2.19, <2.24").describe() == "≥2.19, <2.24"


_versions = st.lists(st.integers(0, 200), min_size=1, max_size=5).map(
    lambda p: ".".join(map(str, p))
)


@given(_versions, _versions, _versions)
def test_the_order_is_total_and_transitive(a, b, c):
    ka, kb, kc = version_key(a), version_key(b), version_key(c)
    assert (ka < kb) + (ka == kb) + (ka > kb) == 1
    if ka <= kb and kb <= kc:
        assert ka <= kc


@given(
    st.lists(st.integers(0, 200), min_size=1, max_size=5),
    st.lists(st.integers(0, 200), min_size=1, max_size=5),
)
def test_numeric_versions_order_like_tuples_with_zero_padding(a, b):
    width = max(len(a), len(b))
    pa, pb = a + [0] * (width - len(a)), b + [0] * (width - len(b))
    expected = (pa > pb) - (pa < pb)
    assert compare(".".join(map(str, a)), ".".join(map(str, b))) == expected
