"""Hostile Markdown in a page body never reaches the browser as active content."""

import pytest

pytestmark = pytest.mark.django_db

HOSTILE = [
    ("<script>alert(1)</script>", ["<script", "alert(1)"]),
    ("<style>body{display:none}</style>", ["<style", "display:none"]),
    ("<img src=x onerror=alert(1)>", ["onerror"]),
    ('<a href="javascript:alert(1)">x</a>', ["javascript:"]),
    ("[click](javascript:alert(1))", ["javascript:"]),
    ("[click](JaVaScRiPt:alert(1))", ["javascript:", "JaVaScRiPt:"]),
    ("![x](data:image/svg+xml;base64,PHN2Zz4=)", ["data:image"]),
    ('<a href="data:text/html,<script>alert(1)</script>">x</a>', ["data:text", "<script"]),
    ('<iframe src="https://evil.example"></iframe>', ["<iframe"]),
    ('<div onclick="alert(1)" style="position:fixed">x</div>', ["onclick", "position:fixed"]),
    ("<svg><script>alert(1)</script></svg>", ["<svg", "<script"]),
    ('<form action="/logout/"><button>x</button></form>', ["<form", "<button"]),
    ("<object data=x></object><embed src=x>", ["<object", "<embed"]),
    ('<meta http-equiv="refresh" content="0;url=https://evil.example">', ["<meta", "http-equiv"]),
    ('<p id="kb-proof">spoof</p>', ['id="kb-proof"']),
]


@pytest.mark.parametrize(("markdown", "forbidden"), HOSTILE)
def test_hostile_markdown_is_neutralised_on_the_page_and_in_the_api(
    make_page, editor_client, markdown, forbidden
):
    page = make_page(body=f"Intro.\n\n{markdown}\n\nOutro.\n")
    html = editor_client.get(f"/kb/{page.slug}/").content.decode()
    article = html.split('id="kb-body">', 1)[1].split("</article>", 1)[0]
    api = editor_client.get(f"/api/v1/pages/{page.slug}/").json()["html"]
    for rendered in (article, api):
        assert "Intro." in rendered and "Outro." in rendered
        for bad in forbidden:
            assert bad not in rendered


def test_links_get_noopener_and_safe_markdown_survives(make_page, editor_client):
    page = make_page(
        body="[docs](https://docs.nvidia.com/deeplearning/nccl/) **bold** `code`\n\n"
        "| a |\n|---|\n| 1 |\n"
    )
    html = editor_client.get(f"/api/v1/pages/{page.slug}/").json()["html"]
    assert (
        'rel="noopener noreferrer"' in html
        and 'href="https://docs.nvidia.com/deeplearning/nccl/"' in html
    )
    assert "<strong>bold</strong>" in html and "<code>code</code>" in html and "<table>" in html


def test_hostile_settings_and_titles_are_escaped(make_page, editor_client):
    page = make_page(
        title="<b>t</b>", settings=[{"kind": "command", "value": "echo '<script>x</script>'"}]
    )
    html = editor_client.get(f"/kb/{page.slug}/").content.decode()
    assert "<script>x</script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html
    assert "<b>t</b>" not in html
