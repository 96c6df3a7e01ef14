"""Qt's own messages (font warnings, platform notes) into Babelfind's log, not the terminal.

    >>> with qt_messages_to_log():
    ...     app.exec()
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Iterator

from PySide6.QtCore import QtMsgType, qInstallMessageHandler

log = logging.getLogger("qt")

_LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}


def qt_message_to_log(kind: QtMsgType, context, message: str) -> None:
    """A Qt message handler: one log record per message, named after its Qt category."""
    category = getattr(context, "category", None) or "default"
    log.log(_LEVELS.get(kind, logging.WARNING), "%s: %s", category, message)


@contextmanager
def qt_messages_to_log() -> Iterator[None]:
    """Routes Qt's messages to the log while it runs, then restores the previous handler."""
    previous = qInstallMessageHandler(qt_message_to_log)
    try:
        yield
    finally:
        qInstallMessageHandler(previous)
