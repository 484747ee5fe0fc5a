"""The shared Markdown renderer against hostile input (documents.markdown)."""

import re

import pytest

from documents.markdown import render_markdown

HOSTILE = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](  javascript:alert(1))",
    '<a href="javascript&#58;alert(1)">x</a>',
    "<img src=x onerror=alert(1)>",
    '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">',
    "![pixel](data:image/png;base64,iVBORw0KGgo=)",
    '<div onclick="alert(1)" onmouseover="alert(2)">hover</div>',
    "<svg><script>alert(1)</script></svg>",
    "<iframe src='https://evil.example'></iframe>",
    "<style>body{display:none}</style>",
    '<form action="https://evil.example"><input name=x></form>',
    '<a href="vbscript:msgbox(1)">x</a>',
    '<object data="x.swf"></object><embed src="x.swf">',
    '<p style="background:url(javascript:alert(1))">styled</p>',
    "<details open ontoggle=alert(1)>x</details>",
]


@pytest.mark.parametrize("source", HOSTILE)
def test_hostile_markdown_renders_nothing_active(source):
    html = str(render_markdown(source)).lower()
    assert "<script" not in html and "<iframe" not in html and "<style" not in html
    assert "<form" not in html and "<object" not in html and "<embed" not in html
    assert "javascript:" not in html and "vbscript:" not in html and "data:" not in html
    assert not re.search(r"\son\w+\s*=", html), html
    assert "style=" not in html


def test_ordinary_markdown_survives():
    html = str(
        render_markdown(
            "# Root cause\n\n**PFC** storm on `mlx5_0`, see [run](/runs/3/) and "
            "[NCCL #1234](https://github.com/NVIDIA/nccl/issues/1234).\n\n"
            "| host | busbw |\n|---|---|\n| a | 180 |\n\n```\nNCCL WARN\n```"
        )
    )
    assert "<h1>Root cause</h1>" in html and "<strong>PFC</strong>" in html
    assert '<a href="/runs/3/" rel="noopener noreferrer">run</a>' in html
    assert 'href="https://github.com/NVIDIA/nccl/issues/1234" rel="noopener noreferrer"' in html
    assert "<table>" in html and "<pre><code>NCCL WARN" in html


def test_text_that_looks_like_html_is_escaped_not_dropped():
    html = str(render_markdown("busbw < 40 && latency > 2 ms"))
    assert "busbw &lt; 40 &amp;&amp; latency &gt; 2 ms" in html
