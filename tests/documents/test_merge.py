"""Three-way merge used for post-mortem save conflicts."""

from documents.merge import merge3

BASE = "## Summary\nold summary\n\n## Impact\nold impact\n\n## Root cause\nunknown\n"


def test_edits_to_different_sections_merge():
    mine = BASE.replace("old summary", "new summary")
    theirs = BASE.replace("unknown", "PFC storm")
    result = merge3(BASE, mine, theirs)
    assert result.conflicts == 0
    assert result.text == BASE.replace("old summary", "new summary").replace("unknown", "PFC storm")


def test_edits_to_the_same_line_conflict_and_offer_no_merge():
    result = merge3(BASE, BASE.replace("unknown", "a"), BASE.replace("unknown", "b"))
    assert result.text is None and result.conflicts == 1


def test_the_same_edit_on_both_sides_is_not_a_conflict():
    both = BASE.replace("old impact", "4 jobs lost")
    assert merge3(BASE, both, both).text == both
    assert merge3(BASE, both + "more\n", both).text == both + "more\n"


def test_edits_that_touch_each_other_conflict():
    mine = BASE.replace("old summary", "new summary")
    theirs = BASE.replace("old summary\n", "old summary\nsecond line\n")
    assert merge3(BASE, mine, theirs).text is None  # no safe order: the user decides


def test_one_side_unchanged_takes_the_other():
    changed = BASE + "\n## Detection\nalert fired\n"
    assert merge3(BASE, BASE, changed).text == changed
    assert merge3(BASE, changed, BASE).text == changed
