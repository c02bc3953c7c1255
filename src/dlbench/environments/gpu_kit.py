"""The GPU kit: the wheels a GPU machine without network lacks for the GPU
campaign (docs/gpus.md), gathered here for its Python and platform.

What the campaign needs is the main environment (pyproject's dependencies)
and, for each of the campaign config's backends, the pins of its CUDA env
file. pip resolves all of it for the target (``--dry-run --report``, no
install); what the machine's interpreter already holds (``envs/gpu-image.txt``)
stays out, the rest is downloaded as wheels. A dependency published only as a
source distribution is built into a wheel here, and must come out pure Python.
The kit and the project's tree are copied together to the GPU machine; where
that copy has a size limit (``--size-limit-mib``), the two must fit it.

Usage: ``python -m dlbench.environments.gpu_kit [--out .gpu-kit] [--size-limit-mib N]``
(``make gpu-kit``).
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from dlbench import catalog
from dlbench.environments import env_files

REPO = Path(__file__).resolve().parents[3]
MANIFEST = "kit.json"
CAMPAIGN_CONFIG = "config/gpu.yaml"
IMAGE_LIST = "envs/gpu-image.txt"
PYTHON_VERSION = "3.12"
# pip matches a manylinux tag exactly: every glibc level a wheel of a
# dependency has been seen to carry, up to the machine's (glibc 2.39).
PLATFORMS = ["manylinux_2_{}_x86_64".format(n) for n in range(39, 4, -1)] + [
    "manylinux2014_x86_64",
    "manylinux2010_x86_64",
    "manylinux1_x86_64",
    "linux_x86_64",
]


class KitError(RuntimeError):
    """The kit cannot be made as asked: the message says why and what to do."""


def image_packages(path):
    """The distributions the GPU machine's interpreter holds: canonical name
    to version (None where the list gives none)."""
    held = {}
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, version = line.partition("==")
        held[canonicalize_name(name)] = version.strip() or None
    return held


def campaign_backends(config_path):
    with open(config_path) as handle:
        return sorted(yaml.safe_load(handle)["backends"])


def requirements(repo=REPO, config_path=None):
    """What the campaign installs: the main environment's pins, then each
    campaign backend's CUDA env file's pins (one requirement a name, the
    first seen kept)."""
    pyproject = tomllib.loads((Path(repo) / "pyproject.toml").read_text())
    found = [Requirement(line) for line in pyproject["project"]["dependencies"]]
    config_path = config_path or Path(repo) / CAMPAIGN_CONFIG
    for backend in campaign_backends(config_path):
        environment = catalog.BACKENDS[backend].environment(1, "gpu")
        spec = env_files.read_spec(Path(repo) / "envs" / (environment + ".yaml"))
        found += env_files.pins(spec)
    chosen = {}
    for requirement in found:
        chosen.setdefault(canonicalize_name(requirement.name), requirement)
    return [str(requirement) for requirement in chosen.values()]


def held_by_image(wanted, image):
    """``wanted`` split into what the kit resolves and what the machine
    holds already: its frameworks (their CUDA builds) are never the kit's."""
    kit, image_side = [], []
    for line in wanted:
        (image_side if canonicalize_name(Requirement(line).name) in image else kit).append(line)
    return kit, image_side


def target_options(python_version):
    options = ["--only-binary=:all:", "--implementation", "cp"]
    options += ["--python-version", python_version]
    options += ["--abi", "cp" + python_version.replace(".", ""), "--abi", "abi3", "--abi", "none"]
    for platform in PLATFORMS:
        options += ["--platform", platform]
    return options


def pip(*arguments, log=None):
    command = [sys.executable, "-m", "pip", *arguments]
    done = subprocess.run(command, capture_output=True, text=True)
    if log is not None:
        log.write("$ " + " ".join(command) + "\n" + done.stdout + done.stderr)
    return done


UNMATCHED = re.compile(r"No matching distribution found for ([A-Za-z0-9_.\-]+)(\S*)")


def resolve(wanted, wheels, python_version, log, image=None):
    """pip's resolution of ``wanted`` for the target (its ``--report``), at
    the versions the machine is known to hold, with wheels built here for
    the dependencies that have only a source distribution (they land in
    ``wheels`` and are found there)."""
    built = []
    held = sorted("{}=={}".format(n, v) for n, v in (image or {}).items() if v)
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        constraints = Path(scratch) / "machine.txt"
        constraints.write_text("\n".join(held) + "\n")
        for _ in range(8):
            done = pip(
                "install",
                "--dry-run",
                "--ignore-installed",
                "--quiet",
                "--report",
                str(report),
                "--target",
                str(Path(scratch) / "target"),
                "--find-links",
                str(wheels),
                "--constraint",
                str(constraints),
                *target_options(python_version),
                *wanted,
                log=log,
            )
            if done.returncode == 0:
                return json.loads(report.read_text()), built
            unmatched = UNMATCHED.search(done.stderr)
            if not unmatched or unmatched.group(1) in built:
                raise KitError(
                    "pip could not resolve the campaign's requirements for Python {}:\n{}".format(
                        python_version, done.stderr.strip()[-3000:]
                    )
                )
            built.append(unmatched.group(1))
            build_pure_wheel(unmatched.group(1) + unmatched.group(2), wheels, log)
    raise KitError("pip's resolution kept asking for source builds: {}".format(built))


def build_pure_wheel(requirement, wheels, log):
    """A wheel built here from a source distribution: only a pure-Python
    one (``py3-none-any``) runs on another machine's Python."""
    before = set(Path(wheels).glob("*.whl"))
    done = pip("wheel", "--no-deps", "--quiet", "-w", str(wheels), requirement, log=log)
    made = set(Path(wheels).glob("*.whl")) - before
    if done.returncode != 0 or not made:
        raise KitError(
            "{} has no wheel and its source would not build: {}".format(
                requirement, done.stderr.strip()[-1000:]
            )
        )
    for wheel in made:
        if not wheel.name.endswith("-none-any.whl"):
            wheel.unlink()
            raise KitError(
                "{} has no wheel for the target and its source builds a platform wheel here "
                "({}): build it with the GPU machine's Python".format(requirement, wheel.name)
            )


def split_resolution(report, image):
    """The resolved distributions the kit carries and those it leaves to the
    machine, each ``{"name", "version", "file"}``. The machine keeps what it
    holds at a known version (the resolution took that version) and its
    compiled packages; a pure-Python one whose version there is unknown
    travels (snakemake needs packaging < 26: the machine's may be newer),
    ahead of the machine's on the campaign interpreter's path."""
    carried, from_image = [], []
    for item in report["install"]:
        metadata = item["metadata"]
        entry = {
            "name": canonicalize_name(metadata["name"]),
            "version": metadata["version"],
            "file": item["download_info"]["url"].rsplit("/", 1)[-1],
        }
        pure = entry["file"].endswith("-none-any.whl")
        machine_keeps = entry["name"] in image and (image[entry["name"]] or not pure)
        (from_image if machine_keeps else carried).append(entry)
    return sorted(carried, key=lambda e: e["name"]), sorted(from_image, key=lambda e: e["name"])


def download(carried, wheels, python_version, log):
    """Each carried wheel, exactly the resolved file (those built here are
    there already)."""
    missing = [entry for entry in carried if not (Path(wheels) / entry["file"]).exists()]
    if not missing:
        return
    pins = ["{}=={}".format(entry["name"], entry["version"]) for entry in missing]
    done = pip(
        "download",
        "--no-deps",
        "--quiet",
        "-d",
        str(wheels),
        *target_options(python_version),
        *pins,
        log=log,
    )
    absent = [entry["file"] for entry in missing if not (Path(wheels) / entry["file"]).exists()]
    if done.returncode != 0 or absent:
        raise KitError("could not download {}: {}".format(absent, done.stderr.strip()[-2000:]))


def travelling_bytes(repo=REPO):
    """The project's tree as it is copied to the GPU machine beside the kit:
    tracked files and untracked ones git does not ignore."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=str(repo),
        capture_output=True,
        check=True,
    ).stdout.decode()
    paths = (Path(repo) / name for name in listed.split("\0") if name)
    return sum(path.stat().st_size for path in paths if path.is_file())


def make_kit(
    out,
    repo=REPO,
    python_version=PYTHON_VERSION,
    image_list=None,
    log=None,
    size_limit_bytes=0,
):
    """Gather the kit in ``out`` and write its manifest, with the size
    limit it is checked against (0: none); wheels of an older kit that it
    no longer holds are removed (two versions of one distribution stop a
    ``--no-deps`` install)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    log = log or open(str(out / "kit.log"), "w")
    image = image_packages(image_list or Path(repo) / IMAGE_LIST)
    wanted, left_to_image = held_by_image(requirements(repo), image)
    report, built = resolve(wanted, out, python_version, log, image)
    carried, from_image = split_resolution(report, image)
    download(carried, out, python_version, log)
    keep = {entry["file"] for entry in carried}
    for wheel in out.glob("*.whl"):
        if wheel.name not in keep:
            wheel.unlink()
    for entry in carried:
        entry["bytes"] = (out / entry["file"]).stat().st_size
    kit_bytes = sum(entry["bytes"] for entry in carried)
    tree_bytes = travelling_bytes(repo)
    manifest = {
        "python_version": python_version,
        "platforms": PLATFORMS,
        "requirements": wanted,
        "image_requirements": left_to_image,
        "image_list": str(image_list or IMAGE_LIST),
        "carried": carried,
        "built_here": built,
        "from_image": from_image,
        "kit_bytes": kit_bytes,
        "tree_bytes": tree_bytes,
        "size_limit_bytes": size_limit_bytes,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def summary(manifest):
    mib = 2.0**20
    total = manifest["kit_bytes"] + manifest["tree_bytes"]
    lines = [
        "GPU kit for Python {}: {} wheels, {:.1f} MiB ({} left to the machine's own)".format(
            manifest["python_version"],
            len(manifest["carried"]),
            manifest["kit_bytes"] / mib,
            len(manifest["from_image"]),
        ),
    ]
    limit = manifest["size_limit_bytes"]
    if limit:
        lines.append(
            "with the project's tree ({:.1f} MiB): {:.1f} of {:.0f} MiB, the size limit".format(
                manifest["tree_bytes"] / mib, total / mib, limit / mib
            )
        )
    else:
        lines.append(
            "with the project's tree ({:.1f} MiB): {:.1f} MiB, no size limit".format(
                manifest["tree_bytes"] / mib, total / mib
            )
        )
    for entry in sorted(manifest["carried"], key=lambda e: -e["bytes"])[:8]:
        lines.append("  {:>6.1f} MiB  {}".format(entry["bytes"] / mib, entry["file"]))
    return "\n".join(lines)


def too_large(manifest):
    limit = manifest["size_limit_bytes"]
    return bool(limit) and manifest["kit_bytes"] + manifest["tree_bytes"] > limit


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # Required: the kit's folder is the campaign's (--kit, plan.paths.KIT_DIR),
    # which make gpu-kit names.
    parser.add_argument("--out", required=True, help="the kit's folder")
    parser.add_argument("--python-version", default=PYTHON_VERSION)
    parser.add_argument("--image-list", help="what the machine holds (default: envs/gpu-image.txt)")
    parser.add_argument(
        "--size-limit-mib",
        type=float,
        default=0,
        help="the most the kit and the project's tree may take together, for a machine "
        "reached through a transfer of limited size (default: 0, no limit)",
    )
    args = parser.parse_args(argv)
    try:
        manifest = make_kit(
            args.out,
            python_version=args.python_version,
            image_list=args.image_list,
            size_limit_bytes=int(args.size_limit_mib * 2**20),
        )
    except KitError as error:
        print("make gpu-kit: {}".format(error), file=sys.stderr)
        return 1
    print(summary(manifest))
    if too_large(manifest):
        print(
            "make gpu-kit: the kit and the project's tree exceed the size limit "
            "(--size-limit-mib; 0 for none)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
