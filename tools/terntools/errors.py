"""Error types shared by the commands.

Every error the tools raise on purpose is one of these, so the CLI can print
it as one line and pick the exit status: a usage error (bad flag value,
missing file, unknown board) exits 2, anything else (a failed build, a guest
that crashed, an unparsable log) exits 1.
"""
from __future__ import annotations


class TernError(Exception):
    """A failure that is not the user's command line: reported, exit 1."""

    exit_status = 1


class UsageError(TernError):
    """The command line names something wrong or missing: exit 2."""

    exit_status = 2
