"""The steps a backend's environment needs after its pip packages are
installed (its catalog entry's ``environment_setup``): system libraries
unpacked into the environment, and the variables its runs get for them."""

import json
import shutil
import subprocess
from pathlib import Path

from dlbench import catalog
from dlbench.environments.build_log import run_logged
from dlbench.environments.env_files import EnvironmentBuildError
from dlbench.host import runtime


def add_environment_variables(destination, variables):
    """Variables the runs in the environment at ``destination`` get
    (``runtime.ENVIRONMENT_ADDITIONS``, applied by the supervisor), beside
    those it already asks for."""
    path = Path(destination) / runtime.ENVIRONMENT_ADDITIONS
    wanted = json.loads(path.read_text()) if path.exists() else {}
    wanted.update(variables)
    path.write_text(json.dumps(wanted, indent=2))


def _installed(package):
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True
    )
    return done.returncode == 0 and "install ok installed" in done.stdout


def _with_dependencies(packages):
    """Debian packages and everything they depend on (alternatives too)."""
    listed = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests"]
        + ["--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"]
        + list(packages),
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted({line for line in listed.splitlines() if line and line[0] not in " <"})


OPENMPI_PACKAGES = ("libopenmpi3", "libhwloc15")
# CNTK 2.7 was linked against OpenMPI 1.10; OpenMPI 4 (Debian 12) provides
# what it calls under newer sonames.
OPENMPI_COMPAT_LINKS = {"libmpi.so.12": "libmpi.so.40", "libmpi_cxx.so.1": "libmpi_cxx.so.40"}


def openmpi_for_cntk(destination, log):
    """Give CNTK the OpenMPI 1.10 libraries it links against: Debian's
    OpenMPI 4 packages and what they need that the system lacks, downloaded
    and unpacked into the environment (no root needed), the old sonames
    linked to the new libraries, and LD_LIBRARY_PATH recorded for the runs
    (``runtime.ENVIRONMENT_ADDITIONS``, applied by the supervisor)."""
    destination = Path(destination).resolve()
    if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
        raise EnvironmentBuildError(
            "keras2-cntk needs OpenMPI 4's libmpi.so.40 and libmpi_cxx.so.40 (Debian/Ubuntu: "
            "libopenmpi3, libhwloc15) under CNTK's old names; this build step uses apt-get "
            "download and dpkg, which this machine lacks"
        )
    missing = [p for p in _with_dependencies(OPENMPI_PACKAGES) if not _installed(p)]
    unpacked = destination / "openmpi"
    downloads = destination / "openmpi-debs"
    downloads.mkdir(parents=True, exist_ok=True)
    if missing:
        print("$ apt-get download " + " ".join(missing), file=log, flush=True)
        subprocess.run(
            ["apt-get", "download"] + missing,
            cwd=str(downloads),
            check=True,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    for deb in sorted(downloads.glob("*.deb")):
        run_logged(["dpkg", "-x", str(deb), str(unpacked)], log)
    shutil.rmtree(str(downloads))
    candidates = sorted(unpacked.glob("usr/lib/*/libmpi.so.40")) + sorted(
        Path("/usr/lib").glob("*/libmpi.so.40")
    )
    if not candidates:
        raise EnvironmentBuildError("no libmpi.so.40 after unpacking {}".format(missing))
    library_dir = candidates[0].parent
    compat = destination / "lib" / "openmpi-compat"
    compat.mkdir(parents=True, exist_ok=True)
    for old, new in OPENMPI_COMPAT_LINKS.items():
        link = compat / old
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(library_dir / new)
    # OpenMPI's own dependencies were unpacked beside it (or are the system's)
    add_environment_variables(destination, {"LD_LIBRARY_PATH": [str(compat), str(library_dir)]})
    print("OpenMPI for CNTK: {} -> {}".format(sorted(OPENMPI_COMPAT_LINKS), library_dir), file=log)


# The steps a backend's environment may need after its pip packages are
# installed, by the name its catalog entry gives (``environment_setup``).
SETUP_STEPS = {"openmpi_for_cntk": openmpi_for_cntk}


def setup_step(environment):
    """The step the environment's backend names, or None."""
    entry = catalog.BACKENDS.get(catalog.backend_of_environment(environment), {})
    return SETUP_STEPS.get(entry.get("environment_setup"))
