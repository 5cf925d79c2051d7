"""Data-provided text renders as the text it is: CommonMark shows it literally and nothing becomes a link."""

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from skillorchestra_core.display_text import JOINER, html_escape, md_code, md_escape, md_fmt, md_line, strip_joiners

HOSTILE = [
    "![x](http://198.51.100.7/p.png)",
    "[click](https://198.51.100.7/x) and <https://198.51.100.7/y>",
    "bare http://198.51.100.7/z and HTTPS://198.51.100.7/Z and www.example.org",
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=1">',
    "mail me: someone@example.org",
    "# heading\n- item\n1. one\n> quote\n---",
    "**bold** _it_ ~~s~~ `code` $x^2$ :red[red] :material/home: :smile:",
    "a | b\n--|--\n1 | 2",
    "-leading dash", "+plus", "=equals", "\\ back\\slash",
]
# The literal-autolink patterns of GitHub-flavoured Markdown (micromark / mdast gfm-autolink-literal), which run on
# the text after backslash escapes are resolved.
GFM_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)", re.IGNORECASE)
GFM_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)")
SHORTCODE = re.compile(r":[\w/+-]+:")

MD = MarkdownIt("commonmark")


def _rendered_text(markdown: str) -> tuple[str, str]:
    """(the HTML CommonMark makes of `markdown`, its text with tags stripped and entities decoded)."""
    out = MD.render(markdown)
    return out, html.unescape(re.sub(r"<[^>]+>", "", out))


@pytest.mark.parametrize("text", HOSTILE)
def test_md_escape_renders_exactly_the_text(text):
    out, shown = _rendered_text(md_escape(text))
    assert re.findall(r"<(\w+)", out) == ["p"] * len(re.findall(r"<p>", out))  # paragraphs only: no a/img/h1/li
    assert strip_joiners(shown).strip() == text.strip()


@pytest.mark.parametrize("text", HOSTILE)
def test_md_escape_leaves_nothing_to_autolink(text):
    shown = _rendered_text(md_escape(text))[1]
    assert not GFM_URL.search(shown)
    assert not GFM_EMAIL.search(shown)
    assert not SHORTCODE.search(shown)


def test_unescaped_text_would_have_linked():
    """The checks above can fail: the raw hostile text does hold links, images and autolinks."""
    out, shown = _rendered_text(HOSTILE[0] + "\n\n" + HOSTILE[2])
    assert "<img" in out
    assert GFM_URL.search(shown)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=60))
def test_md_escape_round_trips_any_line(text):
    line = " ".join(text.split())
    out, shown = _rendered_text(md_line(text))
    assert strip_joiners(shown).strip() == strip_joiners(line).strip()
    assert not re.search(r"<(?!p>|/p>)", out)


def test_md_line_and_fmt_keep_only_the_template_markup():
    assert "\n" not in md_line("a\n\n# b")
    assert md_fmt("**{}** on {skill}", "*x*", skill="[y](http://h)") == (
        "**\\*x\\*** on \\[y\\](http\\:" + JOINER + "//h)")
    assert md_escape(None) == "" and md_line(None) == ""


def test_md_code_fence_outgrows_backticks():
    assert md_code("gpt-4o") == "`gpt-4o`"
    assert md_code("a``b") == "```a``b```"
    assert md_code("`x") == "`` `x ``"
    out, shown = _rendered_text(md_code("a``b ![i](http://h/p.png)"))
    assert "<img" not in out and shown.strip() == "a``b ![i](http://h/p.png)"


def test_html_escape_quotes_everything():
    assert html_escape('<img src=x onerror="a()">&\'') == "&lt;img src=x onerror=&quot;a()&quot;&gt;&amp;&#x27;"
    assert html_escape(None) == ""
