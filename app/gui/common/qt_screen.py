"""Windows that fit the screen they open on, and sort arrows that point the way people read.

    >>> fit_to_screen(panel, (1100, 720))       # smaller on a small screen, never off its edge
    >>> use_sort_arrows(table.horizontalHeader())
"""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QProxyStyle, QStyle, QStyleOptionHeader, QWidget

# Room kept for the title bar and frame, which a window's geometry() does not include.
FRAME_ALLOWANCE = (16, 48)


def fitted_rect(preferred: tuple[int, int], minimum: tuple[int, int], available: QRect,
                centre_on: QRect | None = None) -> QRect:
    """The window rectangle: `preferred` size shrunk to `available`, centred, inside it.

    Example: fitted_rect((1100, 720), (600, 400), QRect(0, 0, 1280, 700)).height() == 652
    """
    width = max(min(preferred[0], available.width() - FRAME_ALLOWANCE[0]), min(minimum[0], available.width()))
    height = max(min(preferred[1], available.height() - FRAME_ALLOWANCE[1]), min(minimum[1], available.height()))
    centre = (centre_on or available).center()
    rect = QRect(0, 0, width, height)
    rect.moveCenter(centre)
    # keep the whole window (and its title bar) on the screen
    left = min(max(rect.left(), available.left()), available.right() - width - FRAME_ALLOWANCE[0] // 2)
    top = min(max(rect.top(), available.top() + FRAME_ALLOWANCE[1] - 16), available.bottom() - height - 16)
    rect.moveTo(max(left, available.left()), max(top, available.top()))
    return rect


def fit_to_screen(window: QWidget, preferred: tuple[int, int]) -> None:
    """Sizes and places `window` within the available area of its screen."""
    parent = window.parentWidget()
    screen = (parent.screen() if parent is not None else window.screen()) or QGuiApplication.primaryScreen()
    if screen is None:
        window.resize(*preferred)
        return
    hint = window.minimumSizeHint()
    centre_on = parent.window().frameGeometry() if parent is not None and parent.isVisible() else None
    window.setGeometry(fitted_rect(preferred, (hint.width(), hint.height()), screen.availableGeometry(), centre_on))


class SortArrowStyle(QProxyStyle):
    """Draws a descending sort as a down arrow (largest on top), ascending as an up arrow.

    Qt hands styles SortUp for a descending column and Fusion draws it pointing up, which
    reads as "ascending" to most people. Built without a base style, it follows the
    application's style and never takes ownership of it.
    """

    def drawPrimitive(self, element, option, painter, widget=None) -> None:
        if element == QStyle.PrimitiveElement.PE_IndicatorHeaderArrow and isinstance(option, QStyleOptionHeader):
            flipped = QStyleOptionHeader(option)
            if option.sortIndicator == QStyleOptionHeader.SortIndicator.SortUp:
                flipped.sortIndicator = QStyleOptionHeader.SortIndicator.SortDown
            elif option.sortIndicator == QStyleOptionHeader.SortIndicator.SortDown:
                flipped.sortIndicator = QStyleOptionHeader.SortIndicator.SortUp
            option = flipped
        super().drawPrimitive(element, option, painter, widget)


def use_sort_arrows(header: QWidget) -> None:
    """Gives `header` a SortArrowStyle that it owns (a widget never owns its style)."""
    style = SortArrowStyle()
    style.setParent(header)  # deleted with the header, never while it is in use
    header.setStyle(style)
