"""HTML to plain text with selectolax: main content only, block structure kept.

Navigation, scripts, forms and page furniture are dropped; block elements become line
or paragraph breaks; inline whitespace collapses as a browser would collapse it.
EPUB chapters go through the same `html_to_text`.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.errors import DocumentTooLargeError
from engine.extract.base import (
    HEADING_MARK,
    ExtractedText,
    Heading,
    clean_title,
    normalise_whitespace,
    take_heading_marks,
    without_heading_marks,
)
from engine.extract.text_file import decode_text

# Never content, wherever they appear.
DROPPED_TAGS = (
    "script", "style", "noscript", "template", "nav", "aside",
    "iframe", "svg", "canvas", "button", "select", "textarea", "head",
)
# ASP.NET-style pages wrap the whole page in one <form>; such a form is kept.
FORM_HOLDING_CONTENT = "main, article, h1"
# Page furniture, unless it belongs to an article (an article's header holds its title).
PAGE_FURNITURE = ("header", "footer")
PARAGRAPH_TAGS = frozenset(
    "p h1 h2 h3 h4 h5 h6 blockquote pre table ul ol dl figure hr section article "
    "main address details fieldset".split()
)
LINE_TAGS = frozenset("div li tr dt dd figcaption summary caption legend body".split())
HEADING_TAGS = frozenset("h1 h2 h3 h4 h5 h6".split())
CELL_TAGS = frozenset(("td", "th"))
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)""", re.IGNORECASE)
_INLINE_SPACE = re.compile(r"\s+")
# Markers the walker emits; html_to_text removes NULs from the input first.
_PARAGRAPH, _LINE = "\x00P", "\x00L"
_BREAKS = re.compile(r"(?:\s*\x00[PL])+\s*")

# Nesting deeper than this is refused before parsing. lexbor's tree building looks down
# the stack of open elements for each start tag, so its time grows with depth times tags
# (2,000,000 nested <div>s: over ten minutes, all inside C). Browsers stop nesting at 512
# levels (Chromium's parser), so no page meant to be read is deeper.
MAX_DEPTH = 1_000
# Pages with fewer tags are parsed unchecked: at worst (all of them nested) lexbor takes
# about 2 s for 20,000, and checking costs a quarter of the extraction time.
CHECKED_FROM_TAGS = 20_000
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:-]*)[^<>]*?(/?)>")
# Elements without content.
_VOID = frozenset("area base basefont bgsound br col embed frame hr image img input keygen link "
                  "meta param source track wbr".split())
# Elements whose end tag may be left out: the start of another closes an open one, unless
# one of these elements lies between them (the HTML parser's scopes, simplified).
_LIST_SCOPE = frozenset("ul ol dl menu table td th tr caption section article aside nav header footer "
                        "main blockquote figure fieldset details form button select html body".split())
_CLOSED_BY_SIBLING = {
    "p": frozenset("table td th caption button object applet marquee template html".split()),
    "li": _LIST_SCOPE, "dt": _LIST_SCOPE, "dd": _LIST_SCOPE,
    **dict.fromkeys("td th tr thead tbody tfoot caption colgroup".split(), frozenset(("table",))),
    **dict.fromkeys(("option", "optgroup"), frozenset(("select",))),
    **dict.fromkeys(("rb", "rt", "rp", "rtc"), frozenset(("ruby",))),
}
_SIBLING_SEARCH = 8  # levels looked down for the sibling to close; deeper ones count as depth


def declared_charset(data: bytes) -> str | None:
    """Charset named by a <meta> tag near the top of an HTML file."""
    match = _META_CHARSET.search(data[:4096])
    return match.group(1).decode("ascii").lower() if match else None


class TooDeepError(ValueError):
    """An HTML page or EPUB chapter nests its elements deeper than MAX_DEPTH."""


def too_deep(path: Path, error: TooDeepError) -> DocumentTooLargeError:
    """The skip reason for a page nested too deeply."""
    return DocumentTooLargeError(path, f"too complex to read safely: {error}")


def nests_deeper_than(html: str, limit: int = MAX_DEPTH) -> bool:
    """Whether the parser would nest this page's elements more than `limit` deep,
    estimated from its tags; stops reading as soon as the answer is yes.

    Example: nests_deeper_than("<div><p>a<p>b</div>" * 5000, 2) is False

    An end tag closes everything opened since the nearest open element of its name; the
    start of an element whose end tag may be left out (p, li, td...) closes an open one
    just above it. That is the HTML parser's rule for ordinary pages, without its special
    cases; the search for that sibling is short, so the estimate cannot be made slow.
    """
    stack: list[str] = []
    open_count: dict[str, int] = {}

    def close(name: str) -> None:  # pops down to and including the nearest open `name`
        while (top := stack.pop()) != name:
            open_count[top] -= 1
        open_count[name] -= 1

    for match in _TAG.finditer(html):
        closing, name, self_closing = match.groups()
        name = name.lower()
        if closing:
            if open_count.get(name):
                close(name)
            continue
        if name in _VOID or self_closing:
            continue
        if open_count.get(name) and (scope := _CLOSED_BY_SIBLING.get(name)) is not None:
            for above in reversed(stack[-_SIBLING_SEARCH:]):
                if above == name:
                    close(name)
                    break
                if above in scope:
                    break
        stack.append(name)
        open_count[name] = open_count.get(name, 0) + 1
        if len(stack) > limit:
            return True
    return False


def _drop_boilerplate(root) -> None:
    for node in root.css(", ".join(DROPPED_TAGS)):
        node.decompose()
    for node in root.css("form"):
        if node.css_first(FORM_HOLDING_CONTENT) is None:
            node.decompose()
    for node in root.css("[hidden], [aria-hidden=true]"):
        node.decompose()
    for node in root.css(", ".join(PAGE_FURNITURE)):
        if not _inside(node, ("article", "main")):
            node.decompose()


def _inside(node, tags: tuple[str, ...]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag in tags:
            return True
        parent = parent.parent
    return False


def _content_root(tree):
    """The single <main> (or single <article>) when the page has one, else <body>."""
    for selector in ("main", "article"):
        nodes = tree.css(selector)
        if len(nodes) == 1:
            return nodes[0]
    return tree.body or tree.root


def _children(node) -> list:
    out = []
    child = node.child
    while child is not None:
        out.append(child)
        child = child.next
    return out


def _follows_cell(node) -> bool:
    prev = node.prev
    while prev is not None and prev.tag in ("-text", "-comment"):
        prev = prev.prev
    return prev is not None and prev.tag in CELL_TAGS


def _opening(node) -> list[str]:
    """Pieces emitted when the walker enters element `node`."""
    tag = node.tag
    if tag in HEADING_TAGS and _has_words(node):
        return [_PARAGRAPH, HEADING_MARK]
    if tag in PARAGRAPH_TAGS:
        return [_PARAGRAPH]
    if tag in LINE_TAGS:
        return [_LINE]
    if tag in CELL_TAGS and _follows_cell(node):
        return [" | "]
    return []


def _has_words(node) -> bool:
    """Whether an element holds text that survives whitespace normalising."""
    return bool(normalise_whitespace(node.text(deep=True) or ""))


def _walk(root) -> list[str]:
    """Text pieces and break markers in document order; an explicit stack, no recursion."""
    pieces: list[str] = []
    stack: list[tuple[object, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        tag = node.tag
        if leaving:
            pieces.append(_PARAGRAPH if tag in PARAGRAPH_TAGS else _LINE)
        elif tag == "-text":
            pieces.append(_INLINE_SPACE.sub(" ", node.text_content or ""))
        elif tag == "br":
            pieces.append(_LINE)
        elif tag == "pre":
            lines = (node.text(deep=True) or "").split("\n")
            pieces.extend((_PARAGRAPH, _LINE.join(lines), _PARAGRAPH))
        elif tag and not tag.startswith("-"):  # comments and doctype carry no text
            pieces.extend(_opening(node))
            if tag in PARAGRAPH_TAGS or tag in LINE_TAGS:
                stack.append((node, True))
            stack.extend((child, False) for child in reversed(_children(node)))
    return pieces


def _join(pieces: list[str]) -> str:
    # A run of markers (and the blanks around them) becomes the strongest break in it.
    raw = _BREAKS.sub(lambda m: "\n\n" if _PARAGRAPH in m.group(0) else "\n", "".join(pieces))
    return normalise_whitespace(raw)


def html_to_text(html: str) -> tuple[str, str | None]:
    """Main text of an HTML page and its title.

    Example: html_to_text("<title>T</title><nav>menu</nav><p>Hi</p><p>there</p>") ==
        ("Hi\\n\\nthere", "T")

    Raises:
        TooDeepError: the page nests elements more than MAX_DEPTH deep.
    """
    text, title, _headings = read_html(html)
    return text, title


def read_html(html: str) -> tuple[str, str | None, tuple[Heading, ...]]:
    """Main text of an HTML page, its title, and its h1-h6 headings with their offsets.

    Example: read_html("<h1>Setup</h1><p>Run it.</p>") ==
        ("Setup\\n\\nRun it.", "Setup", (Heading(0, "Setup"),))

    Raises:
        TooDeepError: the page nests elements more than MAX_DEPTH deep.
    """
    from selectolax.lexbor import LexborHTMLParser  # lazy: C extension

    if html.count("<") > CHECKED_FROM_TAGS and nests_deeper_than(html):
        raise TooDeepError(f"elements nested over {MAX_DEPTH:,} levels deep")
    tree = LexborHTMLParser(without_heading_marks(html.replace("\x00", "")))
    title_node = tree.css_first("title")
    title = clean_title(title_node.text() if title_node else None)
    if title is None and (h1 := tree.css_first("h1")) is not None:
        title = clean_title(h1.text())
    _drop_boilerplate(tree.root)
    root = _content_root(tree)
    if root is None:
        return "", title, ()
    text, headings = take_heading_marks(_join(_walk(root)))
    return text, title, headings


def extract_html_file(path: Path, data: bytes) -> ExtractedText:
    """Text of an .html/.htm file, decoded by BOM, meta charset or detection."""
    try:
        text, title, headings = read_html(decode_text(data, path, hint=declared_charset(data)))
    except TooDeepError as e:
        raise too_deep(path, e) from e
    return ExtractedText(text=text, format="html", title=title, headings=headings)
