"""Reading CSV exports whatever their separator and encoding (oTree's "Excel CSV" adds a BOM)."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd


def sniff_separator(sample: str, *, candidates: str = ",;\t") -> str:
    """Return the separator of a CSV sample: the candidate that splits the header line most often.

    >>> sniff_separator("a;b;c\\n1;2;3\\n")
    ';'
    >>> sniff_separator("a,b\\n1,2\\n")
    ','
    """
    if not sample:
        raise ValueError("The CSV sample is empty, so its separator cannot be recognised.")
    header = sample.splitlines()[0]
    try:
        return csv.Sniffer().sniff(header, delimiters=candidates).delimiter
    except csv.Error:
        return max(candidates, key=header.count)


def read_csv_any(path: str | Path, **kwargs) -> pd.DataFrame:
    """Read a CSV file with its separator recognised and a UTF-8 byte-order mark removed."""
    path = Path(path)
    with path.open(encoding="utf-8-sig", newline="") as handle:
        sample = handle.read(64 * 1024)
    return pd.read_csv(path, sep=sniff_separator(sample), encoding="utf-8-sig", **kwargs)
