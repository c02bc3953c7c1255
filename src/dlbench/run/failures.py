"""What a failed run's record says: the exception's text (``error_text``),
memory named first where the run ran out of it (``name_memory_errors``), and
one line for the tables (``failure_reason``). The harness writes them for an
exception, the supervisor for a child that died. Importable on Python 3.6."""

import sys
import traceback
from typing import Optional

from dlbench.record.contract import Record
from dlbench.record.fields import Status


def error_text(frames: int = 8, message_chars: int = 1500) -> str:
    """The current exception for the record: its last frames and its
    message, a huge message (a framework printing whole arrays) cut in the
    middle so that the exception's type and both ends stay readable."""
    kind, error, trace = sys.exc_info()
    message = "".join(traceback.format_exception_only(kind, error))
    if len(message) > message_chars:
        half = message_chars // 2
        message = message[:half] + "\n[... cut ...]\n" + message[-half:]
    return "".join(traceback.format_tb(trace)[-frames:]) + message


MEMORY_ERRORS = (
    "MemoryError",
    "bad_alloc",
    "out of memory",
    "Out of memory",
    "OutOfMemory",
    "RESOURCE_EXHAUSTED",
    "Cannot allocate memory",
)


def name_memory_errors(text: str) -> str:
    """An error tail that shows the run ran out of memory says so first."""
    if any(sign in text for sign in MEMORY_ERRORS):
        return "out of memory: the run could not allocate what it needed\n" + text
    return text


def failure_reason(error: str, headline: Optional[str] = None) -> str:
    """One line for tables: the exception (the error's last line), or
    ``headline`` (how the process ended); memory named first."""
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()] or ["?"]
    reason = headline or lines[-1]
    if lines[0].startswith("out of memory"):
        return "out of memory ({})".format(reason)
    return reason


def mark_failed(record: Record) -> None:
    """``record`` of a run the exception being handled ended: ``failed``,
    with the exception's text and its one line."""
    record["status"] = Status.FAILED
    record["error"] = name_memory_errors(error_text())
    record["reason"] = failure_reason(record["error"])
