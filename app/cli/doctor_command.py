"""`babelfind doctor [--json] [--verify]`: what works here, what does not, and what to do.

Exit code 0 when nothing is an error (warnings included), 1 otherwise.
"""

from __future__ import annotations

import json

MARKS = {"ok": "ok", "info": "--", "warn": "!!", "error": "XX"}


def register(subparsers) -> None:
    doctor = subparsers.add_parser(
        "doctor", help="check this installation: versions, devices, models, database, window")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.add_argument("--verify", action="store_true",
                        help="also verify every model file's checksum (reads them all)")
    doctor.set_defaults(run=run_doctor)


def run_doctor(args) -> int:
    from engine.config import DataPaths, home_dir
    from engine.diagnostics import collect

    report = collect(DataPaths(home_dir()), args.db, verify_models=args.verify)
    add_window_checks(report)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        print_report(report)
    return 0 if report.ok else 1


def add_window_checks(report) -> None:
    """The Qt platform plugin and the system libraries it needs (no Qt import)."""
    from app.qt_platform import plugin_check

    check = plugin_check()
    if check.plugin is None:
        report.add("window", "Qt platform", "error", f"no '{check.platform}' plugin in PySide6",
                   "reinstall PySide6-Essentials, or set QT_QPA_PLATFORM to an available plugin")
    elif check.missing:
        report.add("window", "Qt platform", "warn",
                   f"{check.platform}: missing {', '.join(check.missing)}",
                   f"on Debian/Ubuntu: sudo apt-get install {' '.join(check.packages)}")
    else:
        report.add("window", "Qt platform", "ok", f"{check.platform} ({check.plugin.name})")


def print_report(report) -> None:
    from app.printable import printable

    section = None
    width = max(len(c.name) for c in report.checks)
    for check in report.checks:
        if check.section != section:
            section = check.section
            print(section)
        print(f"  {MARKS[check.status]}  {check.name:<{width}}  {printable(check.value)}")
        if check.hint:
            print(f"      {'':<{width}}  -> {printable(check.hint)}")
    problems = sum(c.status in ("warn", "error") for c in report.checks)
    print("all good" if not problems else f"{problems} problem{'s' * (problems > 1)} found")
