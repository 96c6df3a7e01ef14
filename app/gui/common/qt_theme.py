"""Light and dark themes following the system, the style sheet, and tinted SVG icons.

    >>> apply_theme(app)                       # follows QStyleHints.colorScheme()
    >>> button.setIcon(icon("search"))         # resources/icons/search.svg in the text colour

Icons are drawn with `stroke="currentColor"`; Qt's SVG renderer has no notion of a
current colour, so the colour is written into the SVG text before rendering. A theme
change sets the application palette; windows get Qt's own PaletteChange event and
call refresh_icons() (no app-wide signal of our own).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from PySide6.QtCore import QByteArray, QEvent, QObject, QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication, QLabel, QToolButton, QVBoxLayout, QWidget

from engine.resources import resources_dir

RESOURCES = resources_dir()
ICONS = RESOURCES / "icons"
STYLE_SHEET = RESOURCES / "style" / "babelfind.qss"

# User choice stored in QSettings "appearance/theme": follow the system or force one.
THEME_CHOICES = ("system", "light", "dark")


@dataclass(frozen=True)
class Colours:
    """The few colours the style sheet and the painted widgets need."""

    window: str
    base: str
    alt: str
    button: str
    text: str
    muted: str
    border: str
    accent: str
    highlight: str  # background of the highlighted passage
    highlight_soft: str  # background of the other passages of the same document
    badge: str  # language badge background


LIGHT = Colours(
    window="#f6f7f9", base="#ffffff", alt="#eef0f4", button="#ffffff", text="#1f2328",
    muted="#6a737d", border="#d0d7de", accent="#3b6fe0", highlight="#ffd85c",
    highlight_soft="#fff5d6", badge="#e3ebfb",
)
DARK = Colours(
    window="#1c1e22", base="#24272c", alt="#2c3036", button="#2c3036", text="#e6e8eb",
    muted="#9aa3ad", border="#3a3f46", accent="#6d9cff", highlight="#8c6c12",
    highlight_soft="#34312a", badge="#2f3a55",
)


_current: Colours = LIGHT


def colours() -> Colours:
    """The colours of the theme in use."""
    return _current


def is_dark() -> bool:
    return _current is DARK


def system_is_dark() -> bool:
    hints = QGuiApplication.styleHints()
    return hints.colorScheme() == Qt.ColorScheme.Dark


def apply_theme(app: QApplication, choice: str = "system") -> Colours:
    """Sets Fusion, a palette and the style sheet for `choice` (system, light or dark)."""
    global _current
    dark = system_is_dark() if choice == "system" else choice == "dark"
    _current = DARK if dark else LIGHT
    icon.cache_clear()  # before the palette: widgets re-fetch icons on PaletteChange
    app.setStyle("Fusion")
    app.setPalette(_palette(_current))
    app.setStyleSheet(_style_sheet(_current))
    return _current


def follow_system(app: QApplication, choice_getter) -> None:
    """Re-applies the theme when the system switches between light and dark."""

    def on_change(_scheme) -> None:
        if choice_getter() == "system":
            apply_theme(app, "system")

    QGuiApplication.styleHints().colorSchemeChanged.connect(on_change)


@lru_cache(maxsize=128)
def icon(name: str, colour: str | None = None) -> QIcon:
    """resources/icons/<name>.svg drawn in `colour` (default: the theme's text colour)."""
    svg = (ICONS / f"{name}.svg").read_text(encoding="utf-8")
    svg = svg.replace("currentColor", colour or _current.text)
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    result = QIcon()
    for side in (16, 24, 32, 48, 64):
        pixmap = QPixmap(QSize(side, side))
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        renderer.render(painter)
        painter.end()
        result.addPixmap(pixmap)
    return result


def set_icon(target: QObject, name: str) -> None:
    """Gives a button or action the themed icon `name`, and remembers the name so
    refresh_icons() can redraw it in the next theme's colour."""
    target.setProperty("icon_name", name)
    target.setIcon(icon(name))


def refresh_icons(root: QObject) -> None:
    """Redraws every set_icon() icon under `root` (call on QEvent.PaletteChange)."""
    for child in [root, *root.findChildren(QObject)]:
        name = child.property("icon_name")
        if name:
            child.setIcon(icon(name))


def is_palette_change(event) -> bool:
    return event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)


def hint(text: str = "") -> QLabel:
    """A wrapped, muted line of explanation (styled by the theme's `#hint`)."""
    label = QLabel(text)
    label.setObjectName("hint")
    label.setWordWrap(True)
    return label


class QtAdvancedSection(QWidget):
    """A folded "Advanced" part of a page: the technical names and settings, for those
    who want them; the page reads in plain words without it."""

    def __init__(self, title: str = "Advanced", parent=None):
        super().__init__(parent)
        self.toggle = QToolButton()
        self.toggle.setText(title)
        self.toggle.setCheckable(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setAutoRaise(True)
        self.body = QWidget()
        self.body.hide()
        self.toggle.toggled.connect(self.set_open)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.toggle)
        layout.addWidget(self.body)

    def note(self, text: str) -> QLabel:
        """Adds a line of explanation to the folded part; returns it."""
        layout = self.body.layout()
        if layout is None:
            layout = QVBoxLayout(self.body)
            layout.setContentsMargins(12, 0, 0, 0)
        label = hint(text)
        layout.addWidget(label)
        return label

    def set_open(self, open_: bool) -> None:
        self.toggle.setChecked(open_)
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if open_ else Qt.ArrowType.RightArrow)
        self.body.setVisible(open_)

    def is_open(self) -> bool:
        return self.body.isVisible() or self.toggle.isChecked()


def app_icon() -> QIcon:
    return icon("babelfind")


def _palette(c: Colours) -> QPalette:
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: c.window,
        QPalette.ColorRole.WindowText: c.text,
        QPalette.ColorRole.Base: c.base,
        QPalette.ColorRole.AlternateBase: c.alt,
        QPalette.ColorRole.Button: c.button,
        QPalette.ColorRole.ButtonText: c.text,
        QPalette.ColorRole.Text: c.text,
        QPalette.ColorRole.ToolTipBase: c.base,
        QPalette.ColorRole.ToolTipText: c.text,
        QPalette.ColorRole.PlaceholderText: c.muted,
        QPalette.ColorRole.Highlight: c.accent,
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: c.accent,
    }
    for role, value in roles.items():
        palette.setColor(role, QColor(value))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(c.muted))
    return palette


def _style_sheet(c: Colours) -> str:
    sheet = STYLE_SHEET.read_text(encoding="utf-8")
    for name, value in vars(c).items():
        sheet = sheet.replace(f"@{name}@", value)
    return sheet
