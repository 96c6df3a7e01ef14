"""The preview pane: the document's text, scrolled to the passage, the passage highlighted.

    >>> preview = QtPreview(load_text=lib.document_text)
    >>> preview.show_hit(document_hit)        # best passage first; Prev/Next walk the others
    >>> preview.highlighted_range()           # (start, end) offsets into the document text
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QGuiApplication, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.gui.common.qt_theme import colours, is_palette_change, set_icon
from engine.errors import BabelfindError
from engine.events import DocumentHit, PassageHit
from app.gui.search.qt_models import MESSAGE_FORMATS, document_title
from engine.extract import page_name
from engine.highlight import NO_TERMS, match_spans

log = logging.getLogger(__name__)


class QtPreview(QWidget):
    """Shows one DocumentHit; open / show in folder / copy act on the shown passage."""

    open_requested = Signal(str)  # path
    show_in_folder_requested = Signal(str)  # path

    def __init__(self, load_text: Callable[[Path], object], parent=None):
        super().__init__(parent)
        self._load_text = load_text
        self._hit: DocumentHit | None = None
        self.terms = NO_TERMS  # the last search's words (ParsedQuery.highlight), marked in the passages
        self._passage_index = 0
        self._text_path: str | None = None  # whose text the editor holds now
        self._text = None  # that text as extracted (ExtractedText): sheet names, OCR pages
        # The passage offset the view keeps centred until the person scrolls. The first
        # hit of the first search is shown while the results pane is still hidden and
        # small; when the pane grows, long wrapped lines push the passage out of view.
        self._follow_offset: int | None = None
        self._build()
        self.editor.installEventFilter(self)
        self.editor.verticalScrollBar().actionTriggered.connect(self._stop_following)

    def _build(self) -> None:
        self.title = QLabel("No document selected")
        self.title.setObjectName("previewTitle")
        self.meta = QLabel("")
        self.meta.setObjectName("previewMeta")
        # long names and facts wrap or clip; they must never widen the window past the screen
        self.meta.setWordWrap(True)
        for label in (self.title, self.meta):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("preview")
        self.editor.setReadOnly(True)
        self.editor.setTabChangesFocus(True)  # Tab leaves the preview like any other pane
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.editor.setToolTip("The document's text; the matching passage is highlighted")
        self.editor.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.editor.customContextMenuRequested.connect(self._context_menu)
        self.previous_button = self._tool("previous", "Previous matching passage in this document", lambda: self.step(-1))
        self.next_button = self._tool("next", "Next matching passage in this document", lambda: self.step(1))
        self.open_button = self._tool("open", "Open the file in its usual application", self._open)
        self.folder_button = self._tool("folder", "Show the file in its folder", self._show_in_folder)
        self.copy_button = self._tool("copy", "Copy the highlighted passage", self.copy_passage)
        header = QHBoxLayout()
        titles = QVBoxLayout()
        titles.setSpacing(0)
        titles.addWidget(self.title)
        titles.addWidget(self.meta)
        header.addLayout(titles, 1)
        for button in (self.previous_button, self.next_button, self.copy_button, self.folder_button, self.open_button):
            header.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(header)
        layout.addWidget(self.editor, 1)
        self._set_enabled(False)

    def _tool(self, icon_name: str, tip: str, slot) -> QToolButton:
        button = QToolButton()
        set_icon(button, icon_name)
        button.setToolTip(tip)
        button.setAutoRaise(False)
        button.clicked.connect(slot)
        return button

    def changeEvent(self, event) -> None:
        if is_palette_change(event) and self._hit is not None:
            self._highlight()  # highlight colours follow the theme
        super().changeEvent(event)

    def _set_enabled(self, enabled: bool) -> None:
        for button in (self.open_button, self.folder_button, self.copy_button):
            button.setEnabled(enabled)
        many = enabled and self._hit is not None and len(self._hit.passages) > 1
        self.previous_button.setEnabled(many)
        self.next_button.setEnabled(many)

    # -- what is shown -------------------------------------------------------------

    def hit(self) -> DocumentHit | None:
        return self._hit

    def passage(self) -> PassageHit | None:
        return self._hit.passages[self._passage_index] if self._hit and self._hit.passages else None

    def show_hit(self, hit: DocumentHit | None) -> None:
        """Shows `hit`'s document at its best passage; None clears the pane."""
        self._hit = hit
        self._passage_index = 0
        if hit is None:
            self.clear()
            return
        if hit.path != self._text_path:
            self._load(hit.path)
        self._set_enabled(True)
        self._highlight()

    def step(self, delta: int) -> None:
        """Moves to the next (1) or previous (-1) passage of the same document."""
        if self._hit is None or not self._hit.passages:
            return
        self._passage_index = (self._passage_index + delta) % len(self._hit.passages)
        self._highlight()

    def clear(self) -> None:
        self._hit = None
        self._text_path = None
        self._text = None
        self.editor.clear()
        self.editor.setExtraSelections([])
        self.title.setText("No document selected")
        self.meta.setText("")
        self._set_enabled(False)

    def highlighted_range(self) -> tuple[int, int] | None:
        """(start, end) of the strongly highlighted passage in the shown text."""
        selections = self.editor.extraSelections()[: len(self._hit.passages) if self._hit else 0]
        if not selections:
            return None
        cursor = selections[-1].cursor  # the current passage is drawn after the others
        return cursor.selectionStart(), cursor.selectionEnd()

    def marked_words(self) -> list[str]:
        """The texts of the words marked as matching the query, in document order."""
        selections = self.editor.extraSelections()[len(self._hit.passages) if self._hit else 0 :]
        return [s.cursor.selectedText() for s in selections]

    def _word_marks(self, hit: DocumentHit, length: int) -> list:
        """Bold, underlined marks on the query's words inside the hit's passages."""
        terms = self.terms
        marks = []
        for p in hit.passages:
            for start, end in match_spans(p.text, terms):
                mark = QTextEdit.ExtraSelection()
                fmt = QTextCharFormat()
                fmt.setFontWeight(QFont.Weight.Bold)
                fmt.setFontUnderline(True)
                mark.format = fmt
                cursor = QTextCursor(self.editor.document())
                cursor.setPosition(min(p.start + start, length))
                cursor.setPosition(min(p.start + end, length), QTextCursor.MoveMode.KeepAnchor)
                mark.cursor = cursor
                marks.append(mark)
        return marks

    def _load(self, path: str) -> None:
        try:
            # the stored key itself: document_text turns it back into the exact file name
            self._text = self._load_text(path)
            text = self._text.text
        except BabelfindError as e:
            # the file changed or vanished since it was indexed: say so in the pane
            log.info("preview of %s failed: %s", path, e)
            text, self._text = "", None
            self.meta.setText(f"Cannot show this file now: {e}")
        self.editor.setPlainText(text)
        self._text_path = path

    def _highlight(self) -> None:
        hit, passage = self._hit, self.passage()
        if hit is None or passage is None:
            return
        c = colours()
        length = len(self.editor.toPlainText())
        selections = []
        # other matching passages of the document softly, the current one on top
        others = [p for p in hit.passages if p is not passage]
        for p, background in [(p, c.highlight_soft) for p in others] + [(passage, c.highlight)]:
            selection = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(background))
            selection.format = fmt
            cursor = QTextCursor(self.editor.document())
            cursor.setPosition(min(p.start, length))
            cursor.setPosition(min(p.end, length), QTextCursor.MoveMode.KeepAnchor)
            selection.cursor = cursor
            selections.append(selection)
        selections.extend(self._word_marks(hit, length))
        self.editor.setExtraSelections(selections)
        self._scroll_to(min(passage.start, length))
        self._describe(hit, passage)

    def eventFilter(self, watched, event) -> bool:
        if watched is self.editor and self._follow_offset is not None and event.type() in (
            QEvent.Type.Show, QEvent.Type.Resize
        ):
            QTimer.singleShot(0, self, self._follow)  # once the new size is laid out
        return super().eventFilter(watched, event)

    def _follow(self) -> None:
        if self._follow_offset is not None:
            self._scroll_to(self._follow_offset)

    def _stop_following(self, _action: int) -> None:
        self._follow_offset = None  # the person scrolled: leave the view where they put it

    def _scroll_to(self, offset: int) -> None:
        self._follow_offset = offset
        cursor = QTextCursor(self.editor.document())
        # land at the end first so the passage ends up near the top, not the bottom
        cursor.movePosition(QTextCursor.MoveOperation.End)
        self.editor.setTextCursor(cursor)
        cursor.setPosition(offset)
        self.editor.setTextCursor(cursor)
        self.editor.centerCursor()

    def _describe(self, hit: DocumentHit, passage: PassageHit) -> None:
        self.title.setText(document_title(hit))
        parts = [str(Path(hit.path).parent)]
        if hit.title and hit.format in MESSAGE_FORMATS:
            parts.insert(0, f"message {Path(hit.path).name}")
        if passage.page is not None:
            labels = getattr(self._text, "page_labels", ())
            parts.append(page_name(hit.format, passage.page, labels))
        if (ocr := self._ocr_note(passage)) is not None:
            parts.append(ocr)
        if passage.language:
            parts.append(passage.language.upper())
        parts.append(f"score {passage.score:.2f}")
        parts.append({"keywords": "matched its words", "meaning": "matched by meaning",
                      "both": "matched words and meaning"}.get(passage.matched_by, passage.matched_by))
        if len(hit.passages) > 1:
            parts.append(f"passage {self._passage_index + 1} of {len(hit.passages)}")
        self.meta.setText("  ·  ".join(parts))
        self.meta.setToolTip(hit.path)

    def _ocr_note(self, passage: PassageHit) -> str | None:
        """ "text read by OCR (engine)" when the passage's page was a scan or an image."""
        text = self._text
        if text is None or not getattr(text, "ocr_pages", ()):
            return None
        if text.page_starts and passage.page not in text.ocr_pages:
            return None
        return f"text read by OCR: {text.ocr_engine}" if text.ocr_engine else "text read by OCR"

    # -- actions -------------------------------------------------------------------

    def copy_passage(self) -> None:
        passage = self.passage()
        if passage is not None:
            QGuiApplication.clipboard().setText(passage.text)

    def _open(self) -> None:
        if self._hit is not None:
            self.open_requested.emit(self._hit.path)

    def _show_in_folder(self) -> None:
        if self._hit is not None:
            self.show_in_folder_requested.emit(self._hit.path)

    def _context_menu(self, pos) -> None:
        menu = self.editor.createStandardContextMenu()
        menu.addSeparator()
        for text, slot, enabled in (
            ("Copy passage", self.copy_passage, self._hit is not None),
            ("Open file", self._open, self._hit is not None),
            ("Show in folder", self._show_in_folder, self._hit is not None),
        ):
            action = menu.addAction(text, slot)
            action.setEnabled(enabled)
        menu.exec(self.editor.mapToGlobal(pos))

