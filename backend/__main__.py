"""Command line entry: ``python -m backend report FILE [--json]``.

The report kind is recognised from the CSV's columns, so one command covers every export of the apps
(and the LLM runners, which write the same columns).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

# Each module named here provides ``looks_like(columns) -> bool`` and
# ``report(paths, *, as_json=False) -> str``. The first that recognises the file wins.
REPORT_MODULES = [
    "backend.dond_report",
    "backend.social_report",
    "backend.reasoning_report",
    "backend.bias_report",
]


def _read_header(path: Path) -> list[str]:
    import pandas as pd

    from backend.csvio import read_csv_any

    return list(read_csv_any(path, nrows=0).columns) if path.suffix != ".json" else list(pd.read_json(path).columns)


def _find_reporter(columns: list[str]):
    for name in REPORT_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name == name:
                continue
            raise
        if module.looks_like(columns):
            return module
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    report = sub.add_parser("report", help="print the metrics of an exported CSV file")
    report.add_argument("files", nargs="+", type=Path, help="CSV export(s) of one kind")
    report.add_argument("--json", action="store_true", help="print JSON instead of tables")
    args = parser.parse_args(argv)

    for path in args.files:
        if not path.is_file():
            parser.error(f"{path} does not exist or is not a file.")
    columns = _read_header(args.files[0])
    reporter = _find_reporter(columns)
    if reporter is None:
        parser.error(f"{args.files[0]} has columns {columns[:8]}..., which match no known export.")
    print(reporter.report(args.files, as_json=args.json))
    return 0


if __name__ == "__main__":
    sys.exit(main())
