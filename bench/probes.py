"""The server's process tree as the benches measure it, from ``/proc``: its processes, their memory and CPU time."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path


def _stat_fields(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()  # fields 3.. (the command name may hold spaces)


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants (oTree's prodserver starts a timeout subprocess)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int(_stat_fields(int(entry.name))[1])
            except (OSError, ValueError, IndexError):
                continue
    tree, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        tree += frontier
    return tree


def status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class ServerProbe(threading.Thread):
    """Samples the summed VmRSS of a process tree every ``interval`` seconds; reads its CPU time on demand."""

    def __init__(self, pid: int, interval: float = 0.2):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_kb = self.main_peak_kb = 0
        self._halt = threading.Event()

    def run(self) -> None:
        pids, refreshed = process_tree(self.pid), time.monotonic()
        while not self._halt.is_set():
            if time.monotonic() - refreshed > 2:
                pids, refreshed = process_tree(self.pid), time.monotonic()
            sizes = [status_kb(pid, "VmRSS") for pid in pids]
            self.peak_kb = max(self.peak_kb, sum(sizes))
            self.main_peak_kb = max(self.main_peak_kb, sizes[0])
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join()

    def cpu_seconds(self) -> float:
        ticks = 0
        for pid in process_tree(self.pid):
            try:
                fields = _stat_fields(pid)
                ticks += int(fields[11]) + int(fields[12])  # utime, stime
            except (OSError, ValueError, IndexError):
                continue
        return ticks / os.sysconf("SC_CLK_TCK")

    def hwm_kb(self) -> int:
        """The main process's own high-water mark (catches peaks between two samples)."""
        return status_kb(self.pid, "VmHWM")
