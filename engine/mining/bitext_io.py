"""Writing and reading mined sentence pairs: TSV (score, source, target) and TMX 1.4.

    >>> write_pairs(Path("pairs.tmx"), rows, src_lang="de", tgt_lang="en")
    >>> read_tsv(Path("pairs.tsv"))      # [(1.21, "Hallo Welt.", "Hello world."), ...]

TSV cells cannot hold tabs or line breaks, so they are written as the two-character
escapes "\\t" and "\\n" (and a backslash as "\\\\"); `read_tsv` undoes them, so a round
trip returns the texts unchanged. TMX is built with xml.etree, which escapes markup and
quotes; characters XML 1.0 forbids (most C0 controls) are dropped, since no parser would
accept the file otherwise.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Sequence

from engine.errors import InputError
from engine.extract.text_file import bom_encoding
from engine.safe_open import read_regular

# (score, source text, target text)
Row = tuple[float, str, str]
FORMATS = ("tsv", "tmx")
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESCAPES = {v: k for k, v in _ESCAPES.items()}
# A pair file larger than this is refused unread: 20 million pairs of long sentences.
MAX_PAIR_FILE_BYTES = 4 * 1024**3


def escape_cell(text: str) -> str:
    """One TSV cell: backslash, tab, CR and LF become two-character escapes."""
    return re.sub(r"[\\\t\n\r]", lambda m: _ESCAPES[m.group()], text)


def unescape_cell(cell: str) -> str:
    return re.sub(r"\\[\\tnr]", lambda m: _UNESCAPES[m.group()], cell)


def format_for(path: Path, fmt: str | None = None) -> str:
    """'tsv' or 'tmx' from `fmt` or the file extension; InputError for anything else."""
    fmt = (fmt or Path(path).suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise InputError(f"{path}: cannot write '{fmt or 'no extension'}'; use a .tsv or .tmx file")
    return fmt


def tsv_text(rows: Iterable[Row]) -> str:
    """Lines "score<TAB>source<TAB>target" with scores to 4 decimals."""
    return "".join(f"{score:.4f}\t{escape_cell(src)}\t{escape_cell(tgt)}\n" for score, src, tgt in rows)


def read_tsv(path: Path) -> list[Row]:
    """Rows of a TSV written by `write_pairs` (UTF-8; UTF-16 when a byte-order mark says so).

    Raises:
        InputError: a line is not (score, source, target), a score is not a number, the
            bytes are not text in that encoding.
        ExtractionError: the file cannot be read (not a regular file, too large).
    """
    rows = []
    for number, line in enumerate(_pair_file_text(Path(path)).splitlines(), 1):
        parts = line.split("\t")
        if len(parts) != 3:
            raise InputError(f"{path}:{number}: expected 3 tab-separated fields, found {len(parts)}")
        rows.append((_score(parts[0], f"{path}:{number}"), unescape_cell(parts[1]), unescape_cell(parts[2])))
    return rows


def _pair_file_text(path: Path) -> str:
    data = read_regular(path, MAX_PAIR_FILE_BYTES)  # never a FIFO, never /dev/zero
    encoding = bom_encoding(data) or "utf-8"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        name = encoding.removesuffix("-sig").upper()
        raise InputError(f"{path}: not {name} text (byte 0x{data[e.start]:02x} at offset {e.start}); "
                         "save the file as UTF-8") from e


def _score(text: str, where: str) -> float:
    """A pair's score: a finite number."""
    try:
        score = float(text)
    except ValueError:
        score = math.nan
    if not math.isfinite(score):
        raise InputError(f"{where}: score {text[:40]!r} is not a number")
    return score


def _xml_safe(text: str) -> str:
    return _XML_FORBIDDEN.sub("", text)


def tmx_tree(rows: Sequence[Row], src_lang: str | None, tgt_lang: str | None) -> ET.ElementTree:
    """A TMX 1.4 document: one <tu> per pair, the score kept as a <prop type="x-score">.

    Unknown languages are written as "und" (undetermined), which TMX tools accept.
    """
    src_lang, tgt_lang = src_lang or "und", tgt_lang or "und"
    tmx = ET.Element("tmx", version="1.4")
    ET.SubElement(
        tmx,
        "header",
        {
            "creationtool": "Babelfind",
            "creationtoolversion": _version(),
            "creationdate": datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ"),
            "srclang": src_lang,
            "adminlang": "en",
            "segtype": "sentence",
            "o-tmf": "Babelfind",
            "datatype": "plaintext",
        },
    )
    body = ET.SubElement(tmx, "body")
    for score, src, tgt in rows:
        tu = ET.SubElement(body, "tu")
        ET.SubElement(tu, "prop", type="x-score").text = f"{score:.4f}"
        for lang, text in ((src_lang, src), (tgt_lang, tgt)):
            tuv = ET.SubElement(tu, "tuv", {_XML_LANG: lang})
            ET.SubElement(tuv, "seg").text = _xml_safe(text)
    ET.indent(tmx)
    return ET.ElementTree(tmx)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("babelfind")
    except Exception:  # noqa: BLE001 - not installed as a package (running from a checkout)
        return "0.1.0"


def write_pairs(
    path: Path,
    rows: Sequence[Row],
    *,
    src_lang: str | None = None,
    tgt_lang: str | None = None,
    fmt: str | None = None,
) -> Path:
    """Writes `rows` as TSV or TMX (by `fmt` or the extension), atomically; returns `path`."""
    path = Path(path)
    fmt = format_for(path, fmt)
    tmp = path.with_name(path.name + ".part")
    try:
        if fmt == "tsv":
            tmp.write_text(tsv_text(rows), encoding="utf-8", newline="\n")
        else:
            tmx_tree(rows, src_lang, tgt_lang).write(tmp, encoding="UTF-8", xml_declaration=True)
        tmp.replace(path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise InputError(f"{path}: cannot write ({e.strerror or e})") from e
    return path


def read_tmx(path: Path) -> tuple[list[Row], str | None, str | None]:
    """(rows, source language, target language) of a TMX file written by `write_pairs`."""
    try:
        root = ET.fromstring(read_regular(path, MAX_PAIR_FILE_BYTES))  # never a FIFO
    except ET.ParseError as e:
        raise InputError(f"{path}: not valid XML ({e})") from e
    header = root.find("header")
    src_lang = header.get("srclang") if header is not None else None
    rows, tgt_lang = [], None
    for tu in root.iter("tu"):
        prop = tu.find("prop[@type='x-score']")
        score = _score(prop.text, f"{path}: a <tu>'s x-score") if prop is not None and prop.text else 0.0
        tuvs = tu.findall("tuv")
        if len(tuvs) != 2:
            raise InputError(f"{path}: a <tu> has {len(tuvs)} <tuv> elements, expected 2")
        texts = [tuv.findtext("seg") or "" for tuv in tuvs]
        tgt_lang = tuvs[1].get(_XML_LANG)
        rows.append((score, texts[0], texts[1]))
    return rows, src_lang, tgt_lang
