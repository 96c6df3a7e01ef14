"""gettext catalogues (.po, .pot): the messages and their translations, not the header.

    >>> extract_po_file(Path("de.po"), data).text
    'Open file\\nDatei öffnen\\n\\nSave\\nSpeichern'

Each entry becomes one paragraph: its translation (msgstr; plural forms give several
lines), or its msgid while it is untranslated (a template, `msgstr ""`). The English
source messages of a translated entry are left out: they are the same in every language's
catalogue of a program, so a folder of catalogues would hold hundreds of unrelated short
English messages matching every English question (issue 28), and each catalogue reads
as the one language it is written in, which is what a person searching it looks for. The
header entry (empty msgid), comments, msgctxt and obsolete `#~` entries carry no text a
person searches for and are left out too. The catalogue's own
`charset=` is a hint for the decoder, as a `<meta charset>` is for HTML.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.extract.base import ExtractedText, normalise_whitespace
from engine.extract.text_file import decode_text

_KEYWORD = re.compile(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?)\s+"(.*)"\s*$')
_CONTINUATION = re.compile(r'^"(.*)"\s*$')
_CHARSET = re.compile(rb"charset=([A-Za-z0-9_.:-]+)")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "", "a": "", "b": "", "f": "", "v": ""}
_ESCAPE = re.compile(r"\\(.)")


def unescape(value: str) -> str:
    """Example: unescape(r'say \\"hi\\"\\n') == 'say "hi"\\n'."""
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), value)


def _declared_charset(data: bytes) -> str | None:
    match = _CHARSET.search(data[:4096])
    if not match:
        return None
    charset = match.group(1).decode("ascii").lower()
    return None if charset == "charset" else charset  # the template's placeholder "CHARSET"


def po_entries(text: str) -> list[dict[str, str]]:
    """The catalogue's entries as {keyword: text}, in file order, obsolete ones dropped.

    Example: po_entries('msgid "Save"\\nmsgstr "Speichern"') == [{"msgid": "Save", "msgstr": "Speichern"}]
    """
    entries: list[dict[str, str]] = []
    entry: dict[str, str] = {}
    keyword = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            if entry and (not line or keyword is not None):
                entries.append(entry)
                entry, keyword = {}, None
            continue
        if match := _KEYWORD.match(line):
            keyword = match.group(1)
            if keyword in ("msgid", "msgctxt") and "msgid" in entry and any(k.startswith("msgstr") for k in entry):
                entries.append(entry)  # entries not separated by a blank line
                entry = {}
            entry[keyword] = unescape(match.group(2))
        elif (match := _CONTINUATION.match(line)) and keyword is not None:
            entry[keyword] += unescape(match.group(1))
    if entry:
        entries.append(entry)
    return [e for e in entries if e.get("msgid")]  # the header has an empty msgid


def _entry_text(entry: dict[str, str]) -> str:
    lines = [value for key, value in sorted(entry.items()) if key.startswith("msgstr")]
    if not any(line.strip() for line in lines):  # untranslated: the source message is all there is
        lines = [entry["msgid"], entry.get("msgid_plural", "")]
    seen: list[str] = []
    for line in lines:
        line = " ".join(line.split())
        if line and line not in seen:  # plural forms often repeat
            seen.append(line)
    return "\n".join(seen)


def extract_po_file(path: Path, data: bytes) -> ExtractedText:
    """Text of a gettext catalogue: one paragraph per message, its translation (or its
    source while untranslated)."""
    text = decode_text(data, path, hint=_declared_charset(data))
    paragraphs = [_entry_text(e) for e in po_entries(text)]
    return ExtractedText(text=normalise_whitespace("\n\n".join(p for p in paragraphs if p)), format="po")
