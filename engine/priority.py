"""Indexing at a lower CPU priority, so the desktop, and the window's own searches, stay
responsive while a large folder is encoded.

    >>> lower_thread_priority(10)       # the calling thread's nice value: the process's + 10

On Linux a nice value belongs to a thread, and threads inherit it from the thread that
starts them. Library jobs lower the thread that runs them (engine.library): in the window
that is the job's own QThread (app.gui.common.qt_worker, one per job, gone when it ends),
so a search typed meanwhile runs at normal priority in its own thread; `babelfind index`
runs its job in the main thread, so the whole command is niced. The encoder's batch
threads are started by the indexing thread and inherit its priority. A nice value cannot
be raised again without privileges, which is why it is set on a thread that ends with the
job, and never on the window's process. Nice only matters when the CPU is contended: on
an idle machine a niced job runs as fast as any other. Elsewhere than Linux (threads have
no nice value of their own) nothing is changed.
"""

from __future__ import annotations

import logging
import os
import sys
import threading

log = logging.getLogger(__name__)

MAX_NICE = 19


def lower_thread_priority(increment: int) -> int | None:
    """Sets the calling thread's nice value to the process's plus `increment` (at most 19;
    never higher priority than it has). Returns the thread's nice value, or None where
    threads have none of their own or it could not be read."""
    if increment <= 0 or not sys.platform.startswith("linux"):
        return None
    thread = threading.get_native_id()
    try:
        process = os.getpriority(os.PRIO_PROCESS, os.getpid())  # the main thread's
        current = os.getpriority(os.PRIO_PROCESS, thread)
        target = min(MAX_NICE, process + increment)
        if current < target:
            os.setpriority(os.PRIO_PROCESS, thread, target)
        return max(current, target)
    except OSError as e:  # a sandbox that forbids it: indexing still runs, at normal priority
        log.info("could not lower the indexing thread's priority: %s", e)
        return None
