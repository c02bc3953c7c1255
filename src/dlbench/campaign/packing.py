"""What a GPU campaign takes home: results.tar.gz, campaign.json and the
machine's pack, in the folder that is copied back from the GPU machine."""

import json
import shutil
import tarfile
from pathlib import Path

from dlbench.plan import paths

# What the packed results hold: records, epoch logs, tables, plots, logs and
# the report; never data or weights.
PACKED_SUFFIXES = (".json", ".csv", ".md", ".png", ".svg", ".html", ".log", ".txt", ".sha256")


def pack(out, campaign, limit_bytes=0):
    """results.tar.gz (no data, no weights), campaign.json and the
    machine's pack (rule pack, once made) in ``out``; the logs left out
    where the archive would exceed ``limit_bytes`` (0: no limit)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "campaign.json").write_text(json.dumps(campaign, indent=1) + "\n")
    files = [
        path
        for folder in (paths.RESULTS_DIR, paths.LOGS_DIR)
        for path in sorted(Path(folder).rglob("*"))
        if path.is_file() and path.suffix in PACKED_SUFFIXES
    ]
    for machine_pack in Path(paths.MACHINE_PACKS_DIR).glob("*.tar.gz"):
        shutil.copy2(str(machine_pack), str(out / machine_pack.name))
    archive = out / "results.tar.gz"
    for keep_logs in (True, False):
        with tarfile.open(str(archive), "w:gz") as tar:
            for path in files:
                if keep_logs or path.suffix != ".log":
                    tar.add(str(path))
        if not limit_bytes or archive.stat().st_size <= limit_bytes:
            return archive, keep_logs
    raise SystemExit("the records alone exceed {} bytes (--archive-limit-mib)".format(limit_bytes))
