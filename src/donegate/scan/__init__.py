"""Scan written Python files for code that reaches into its judge or is fitted to the test.

Pure ``ast``, no heavy imports: it runs on the agent's stop path. Typical use::

    findings = scan_writes(written, test_literals_of(test_sources), settings, is_test)
    if any(f.blocking for f in findings): ...
"""

from __future__ import annotations

from donegate.scan.finding import CONSTRUCTS, Finding
from donegate.scan.fitted import TestLiterals, distinctive, test_literals_of
from donegate.scan.settings import AllowRule, ScanSettings, parse_scan_table
from donegate.scan.writes import WrittenFile, scan_file, scan_writes

__all__ = [
    "CONSTRUCTS",
    "AllowRule",
    "Finding",
    "ScanSettings",
    "TestLiterals",
    "WrittenFile",
    "distinctive",
    "parse_scan_table",
    "scan_file",
    "scan_writes",
    "test_literals_of",
]
