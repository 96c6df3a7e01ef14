"""Where Babelfind keeps its data, and the settings a user can change.

    >>> paths = data_paths()            # honours BABELFIND_HOME
    >>> paths.db_url                    # 'sqlite:////home/me/.local/share/babelfind/babelfind.db'
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from engine.atomic import atomic_file

APP_NAME = "babelfind"
HOME_ENV = "BABELFIND_HOME"


def home_dir() -> Path:
    """The data folder: $BABELFIND_HOME, else the platform's user data directory."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser().resolve()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


@dataclass(frozen=True)
class DataPaths:
    """Every file location derived from one home folder."""

    home: Path

    @property
    def models(self) -> Path:
        return self.home / "models"

    @property
    def indexes(self) -> Path:
        # one FAISS file per index generation lives here
        return self.home / "indexes"

    @property
    def settings_file(self) -> Path:
        return self.home / "settings.json"

    @property
    def default_db_url(self) -> str:
        return f"sqlite:///{self.home / 'babelfind.db'}"

    @property
    def db_url(self) -> str:
        """The configured database URL (settings.json 'db_url'), else SQLite in home."""
        return load_settings(self).get("db_url") or self.default_db_url


def data_paths(home: Path | None = None) -> DataPaths:
    """The home's paths; the home is made (or kept) readable by this user only."""
    from engine.private import private_home

    paths = DataPaths(Path(home) if home is not None else home_dir())
    private_home(paths.home)
    return paths


def load_settings(paths: DataPaths) -> dict:
    """User settings (db_url, active_model, device); {} when none were saved."""
    try:
        return json.loads(paths.settings_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        # A damaged settings file must not stop the app; defaults apply.
        return {}


def save_settings(paths: DataPaths, **changes) -> dict:
    """Merges `changes` into settings.json atomically and returns the result."""
    settings = load_settings(paths) | changes
    with atomic_file(paths.settings_file, "w", encoding="utf-8") as f:
        f.write(json.dumps(settings, indent=2, sort_keys=True))
    return settings


@dataclass(frozen=True)
class ExtractLimits:
    """Bounds on the work one document may cost; past any of them it is skipped with a reason.

    Example: ExtractLimits(max_pages=500, max_seconds=10.0)

    Zip containers (DOCX, ODT, EPUB) are checked against their directory before any
    member is read, then streamed with the same caps, since a directory can lie.
    Archives and mailboxes count their members and unpacked bytes together, nested
    ones included, against the same limits.
    """

    # Bytes read from disk for one document; larger files are refused unread.
    max_file_bytes: int = 64 * 1024 * 1024
    # Decompressed bytes of all members of one zip container together: a 2 MB DOCX
    # that unpacks to 2 GiB is a bomb, not a document.
    max_unpacked_bytes: int = 512 * 1024 * 1024
    # Decompressed bytes of any one member (document.xml, content.xml, a chapter, an image).
    max_member_bytes: int = 256 * 1024 * 1024
    # Members of one zip container; each costs a directory entry and a parser call.
    max_members: int = 20_000
    # PDF pages read; a 7 KB file can declare 99,000 pages that share one page object.
    max_pages: int = 5_000
    # Wall-clock seconds for one document, checked between pages and members; the indexer
    # reads in a child process that is killed at this deadline (engine/extract/isolated.py).
    max_seconds: float = 120.0
    # Memory the indexer's reading process may take for one document beyond what it held
    # before (its address space, where the platform can bound it); None: no bound.
    max_memory_bytes: int | None = 1024 * 1024 * 1024
    # Characters of text from one PDF or EPUB, counted page by page and chapter by
    # chapter: pages or chapters listed many times over must not fill the memory.
    # For an archive or a mailbox, the text of all its members together.
    max_text_chars: int = 100_000_000
    # Non-empty cells read from one spreadsheet (all sheets): ~20 MB of text. Empty
    # cells cost nothing (an ODS row "repeated 1,048,576 times" is skipped in one step).
    max_cells: int = 2_000_000
    # Containers inside containers (a zip in a mail in an mbox): deeper ones are skipped.
    max_depth: int = 4
    # Pixels of one image or rendered page handed to OCR; larger images are refused
    # before they are decoded (a 30,000 x 30,000 PNG is 900 megapixels).
    max_image_pixels: int = 60_000_000
    # Read images and PDF pages without a text layer with OCR (when an engine is installed).
    ocr: bool = True
    # OCR engine: "auto" (Tesseract when installed, RapidOCR for Chinese), "tesseract", "rapidocr".
    ocr_engine: str = "auto"
    # Seconds for one page's OCR: past that the OCR process is killed and the page is empty.
    ocr_page_seconds: float = 60.0
    # Wall-clock seconds for a document that needs OCR (a 500-page scan at ~2 s a page
    # would never fit `max_seconds`); pages past it are refused with the document.
    max_ocr_seconds: float = 900.0
