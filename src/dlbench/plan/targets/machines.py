"""workflow/rules/machines.smk: the imported results."""

import hashlib
from pathlib import Path

from dlbench.plan.targets.common import (
    TargetsBase,
)


class MachinesTargets(TargetsBase):
    """The inputs and parameters of workflow/rules/machines.smk's rules."""

    def import_sources(self):
        """The imported results folders and archives, as given."""
        return list(self.config["import_results"])

    def import_fingerprint(self):
        """What the imported folders hold (each record's path, size and time):
        a record added or changed inside a folder, whose own time may not change,
        imports again."""
        found = []
        for source in map(Path, self.config["import_results"]):
            if source.is_dir():
                for path in sorted(source.rglob("run.json")):
                    status = path.stat()
                    found.append(f"{path}:{status.st_size}:{status.st_mtime_ns}")
        return hashlib.sha256("\n".join(found).encode()).hexdigest()
