"""Data-provided text (names, descriptions, queries, LLM output, error messages) made safe to show.

Streamlit renders Markdown in st.markdown, captions, alerts, subheaders, widget labels, help tooltips and metric
labels; Plotly and HTML views render a subset of HTML. Whatever a handbook, agent or skill is called, these helpers
keep it literal text: no image, link, heading, directive or markup of any kind, and no request to another host.
"""

from __future__ import annotations

import html
import re

# U+2060 WORD JOINER: invisible, not whitespace, not a URL or e-mail character. Placed inside "http:" + "//",
# "www" + "." and "@" + domain, it stops GFM's autolink-literal pass, which runs on the *unescaped* text (so a
# backslash before ":" alone does not stop "http://host" from becoming a link).
JOINER = "\u2060"
# Active anywhere in a line: escapes, code, emphasis, links and images ("!" and "(" only act after "["), raw HTML and
# autolinks, entities, strikethrough, tables, math, Streamlit directives and attributes.
_ALWAYS = frozenset("\\`*_[]<>&~|${}")
# Active at the start of a line (after up to three spaces): headings, quotes, bullets, setext underlines, fences,
# ordered-list numbers ("1." / "1)").
_LINE_START = re.compile(r"^( {0,3})([-+=#>])", re.MULTILINE)
_ORDERED = re.compile(r"^( {0,3}\d{1,9})([.)])", re.MULTILINE)
# ":" opens a directive (":red[x]"), an icon (":material/x:") or an emoji shortcode only right before a name; the
# joiner also splits "http:" from "//". "www." and "@domain" likewise, so GFM's autolink-literal pass, which runs
# on the *unescaped* text, finds nothing to link.
_AUTOLINK = re.compile(r"(?<=:)(?=[\w/+\-])|(?<=www)(?=\.)|(?<=@)(?=\w)", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def md_escape(text: object) -> str:
    """`text` as Markdown that renders exactly as the text reads: every character that is Markdown-active where it
    stands is backslash-escaped (no emphasis, list, heading, link, image, HTML, math or ":directive[...]"); bare
    URLs, www. names, e-mail addresses and ":shortcodes:" are split with an invisible joiner so nothing turns into
    a link or an icon."""
    raw = _AUTOLINK.sub(JOINER, _CONTROL.sub("", "" if text is None else str(text)))
    out = "".join("\\" + ch if ch in _ALWAYS else ch for ch in raw)
    out = _ORDERED.sub(lambda m: m.group(1) + "\\" + m.group(2), out)
    out = _LINE_START.sub(r"\1\\\2", out)
    return out.replace(":" + JOINER, "\\:" + JOINER)


def md_line(text: object) -> str:
    """md_escape on one line: line breaks become spaces (a caption or label never grows a block)."""
    return md_escape(" ".join(("" if text is None else str(text)).split()))


def md_fmt(template: str, *args: object, **kwargs: object) -> str:
    """A trusted Markdown `template` (str.format syntax) filled with escaped values: the only Markdown that
    renders is the template's own."""
    return template.format(*(md_line(a) for a in args), **{k: md_line(v) for k, v in kwargs.items()})


def md_code(text: object) -> str:
    """`text` as an inline code span (literal inside; the fence is longer than any backtick run it holds)."""
    raw = " ".join(("" if text is None else str(text)).split())
    fence = "`" * (max((len(r) for r in re.findall(r"`+", raw)), default=0) + 1)
    pad = " " if raw.startswith("`") or raw.endswith("`") else ""
    return f"{fence}{pad}{raw}{pad}{fence}" if raw else ""


def html_escape(text: object) -> str:
    """HTML-escape any value (quotes too): for Plotly labels and hovers, DOT labels and generated HTML."""
    return html.escape("" if text is None else str(text), quote=True)


def strip_joiners(text: str) -> str:
    """The text a reader sees (what md_escape inserted removed): for comparing rendered text with the data."""
    return text.replace(JOINER, "")
