"""A one-line progress bar for long sweeps.

On a terminal the bar is redrawn in place; when stderr is a file or a pipe
(CI logs) each finished item gets its own line instead, since carriage
returns make such logs unreadable.
"""
from __future__ import annotations

import threading
from typing import TextIO

BAR_WIDTH = 30


class Progress:
    """Counts finished items of a known total and shows them on a stream."""

    def __init__(self, total: int, stream: TextIO, prefix: str = "", tty: bool | None = None) -> None:
        self.total = total
        self.done = 0
        self.stream = stream
        self.prefix = prefix
        self.tty = stream.isatty() if tty is None else tty
        self._lock = threading.Lock()
        self._width = 0

    def bar(self) -> str:
        """The bar text for the current count, e.g. '[#####-----]  5/10'."""
        filled = BAR_WIDTH * self.done // self.total if self.total else BAR_WIDTH
        digits = len(str(self.total))
        return f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {self.done:>{digits}}/{self.total}"

    def advance(self, label: str) -> None:
        """One more item finished; label says which and how it went."""
        with self._lock:
            self.done += 1
            if self.tty:
                text = f"{self.prefix}{self.bar()} {label}"
                pad = max(0, self._width - len(text))
                self.stream.write("\r" + text + " " * pad)
                self._width = len(text)
            else:
                digits = len(str(self.total))
                self.stream.write(f"{self.prefix}[{self.done:>{digits}}/{self.total}] {label}\n")
            self.stream.flush()

    def note(self, line: str) -> None:
        """A message that must not be overwritten by the bar."""
        with self._lock:
            if self.tty and self._width:
                self.stream.write("\r" + " " * self._width + "\r")
                self._width = 0
            self.stream.write(line + "\n")
            self.stream.flush()

    def close(self) -> None:
        with self._lock:
            if self.tty and self._width:
                self.stream.write("\n")
                self._width = 0
            self.stream.flush()
