"""The documentation works as written: every command in the README and
docs/ that runs the workflow is planned (``snakemake -n``) as written,
against the repository's configs, and every config snippet is validated as
the workflow validates a config. A documented command or snippet that stops
working fails here.

As written, but for what a dry run on this machine cannot do:
- ``--report FILE`` makes the report from results: the same invocation is
  planned without it;
- ``--use-conda`` first asks conda, which this machine lacks: planned
  without it (the env files are the same either way);
- GPUs: planned as on a machine with eight (CUDA_VISIBLE_DEVICES);
- ``<machine>`` stands for this machine's name;
- the example data a documented command writes (``python -m
  dlbench.data.own_examples FOLDER``) is written in the copy first, and a
  snippet's own datasets are written where it names them, from those
  examples of their format;
- the archive a GPU box packs (``gpu-box.tar.gz`` in docs/clusters.md) is
  the H200 machine's records in records/gpu, packed as ``snakemake
  pack`` packs;
- the SLURM profile needs Snakemake's SLURM plugin (`pip install -e
  '.[slurm]'`): skipped with the reason where it is missing (the end-to-end
  SLURM test runs the profile for real).
``make`` targets that run the workflow are planned through the Snakemake
commands ``make -n`` prints. A config snippet that is not a whole config is
a fragment of the config its first line names (``# an overlay on
config/gpu.yaml``), of config/smoke-full.yaml otherwise.
"""

import copy
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from dlbench.data import own_examples
from dlbench.plan import matrix, validation
from testkit import MACHINE, REPO, SNAKEMAKE, copy_workflow

PAGES = [
    REPO / "README.md",
    REPO / "config" / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "src" / "dlbench").rglob("ADDING_*.md")),
]
BLOCK = re.compile(r"^\s*```(\w*)\n(.*?)^\s*```", re.S | re.M)
SCHEMA_PATH = REPO / "workflow" / "schemas" / "config.schema.yaml"
SCHEMA = validation.load_schema(SCHEMA_PATH)
REQUIRED = set(SCHEMA["required"])
# make targets that run the workflow (Makefile)
WORKFLOW_TARGETS = ("smoke", "smoke-full", "report")
GPUS = ",".join(str(i) for i in range(8))
SLURM_PLUGIN = importlib.util.find_spec("snakemake_executor_plugin_slurm")


def blocks():
    """(page, language, text) of every fenced block."""
    for page in PAGES:
        for language, text in BLOCK.findall(page.read_text()):
            yield page, language, text


def commands():
    """(where, words) of every documented line that runs the workflow."""
    for page, language, text in blocks():
        if language not in ("bash", "sh", "console", ""):
            continue
        for line in text.replace("\\\n", " ").splitlines():
            try:
                words = shlex.split(line, comments=True)
            except ValueError:
                continue  # not a command (a listing of files)
            if not words:
                continue
            runs_snakemake = os.path.basename(words[0]) == "snakemake"
            runs_make = words[0] == "make" and set(words[1:]) & set(WORKFLOW_TARGETS)
            if runs_snakemake or runs_make:
                yield "{}: {}".format(page.relative_to(REPO), line.strip()), words


def snippets():
    """(where, config) of every YAML block."""
    for page, language, text in blocks():
        if language in ("yaml", "yml"):
            yield "{}: {}".format(page.relative_to(REPO), text.strip().splitlines()[0]), text


def data_commands():
    """The documented lines that write example data for the commands after them."""
    for _page, language, text in blocks():
        if language in ("bash", "sh", "console", ""):
            for line in text.splitlines():
                try:
                    words = shlex.split(line, comments=True)
                except ValueError:
                    continue  # not a command
                if words[1:3] == ["-m", own_examples.__name__]:
                    yield words


COMMANDS = list(commands())
SNIPPETS = list(snippets())
DATA_COMMANDS = list(data_commands())


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A copy of the workflow with the tests' fixtures and the kept GPU
    records, and the archive a GPU box packs."""
    workdir = copy_workflow(tmp_path_factory.mktemp("documented") / "workflow")
    for words in DATA_COMMANDS:
        subprocess.run([sys.executable, *words[1:]], cwd=str(workdir), check=True)
    (workdir / "tests").mkdir(exist_ok=True)
    (workdir / "tests" / "fixtures").symlink_to(REPO / "tests" / "fixtures")
    (workdir / "records").symlink_to(REPO / "records")
    runs = REPO / "records" / "gpu" / "runs"
    with tarfile.open(workdir / "gpu-box.tar.gz", "w:gz") as packed:
        for path in sorted(runs.rglob("*")):
            if path.is_file():
                packed.add(path, arcname=str(path.relative_to(runs)))
    return workdir


def as_planned(words):
    """The snakemake invocations a documented line makes, as dry runs."""
    if words[0] == "make":
        shown = subprocess.run(
            ["make", "-n", "BIN=.venv/bin", *words[1:]],
            cwd=str(REPO),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        # the recipes that run snakemake (not "touch .venv/bin/snakemake", which
        # make shows where pyproject.toml is newer than the environment)
        lines = [
            line
            for line in shown.splitlines()
            if line.strip() and os.path.basename(shlex.split(line)[0]) == "snakemake"
        ]
        assert lines, "make -n {} runs no snakemake".format(" ".join(words[1:]))
        return [planned for line in lines for planned in as_planned(shlex.split(line))]
    planned = []
    rest = iter(words[1:])
    for word in rest:
        if word == "--report":
            next(rest, None)
        elif word != "--use-conda":
            planned.append(word.replace("<machine>", MACHINE))
    return [tuple(planned)]


def plans():
    """[(invocation, where it is documented)]: the same invocation (a -j of
    another size aside) planned once."""
    found = {}
    for where, words in COMMANDS:
        for planned in as_planned(words):
            key = tuple(word for word in planned if not re.fullmatch(r"-j\d*", word))
            found.setdefault(key, (planned, []))[1].append(where)
    return list(found.values())


PLANS = plans()


@pytest.mark.parametrize("planned, where", PLANS, ids=[" | ".join(where) for _, where in PLANS])
def test_every_documented_command_plans(planned, where, workdir):
    if "profiles/slurm" in planned and SLURM_PLUGIN is None:
        pytest.skip("Snakemake's SLURM plugin is not installed (pip install -e '.[slurm]')")
    command = [SNAKEMAKE, *planned, "-n", "--quiet", "rules"]
    done = subprocess.run(
        command,
        cwd=str(workdir),
        capture_output=True,
        text=True,
        env=dict(os.environ, CUDA_VISIBLE_DEVICES=GPUS),
        timeout=300,
    )
    assert done.returncode == 0, "{}\n{}\n{}".format(
        " ".join(command), done.stdout[-2000:], done.stderr[-3000:]
    )


def test_the_documentation_runs_the_workflow_somewhere():
    """The extraction itself: the README's commands and the questions' are found."""
    found = " ".join(where for where, _ in COMMANDS)
    assert "README.md" in found and "docs/questions.md" in found
    assert len(SNIPPETS) >= 5


def base_of(text):
    first = text.strip().splitlines()[0]
    named = re.match(r"#.*?(config/[\w/.-]+\.yaml)", first)
    return REPO / (named.group(1) if named else "config/smoke-full.yaml")


def write_own_datasets(entries, root):
    """Files where ``entries`` (own_datasets) name them, from the examples of
    their format (dlbench.data.own_examples), under ``root``."""
    examples = own_examples.write_all(root / "_examples")
    like = {"images": "shapes", "npz": "sentences", "npy": "gradients", "csv": "trees"}
    for entry in entries.values():
        example = examples[like[entry["format"]]]
        for split in ("train", "test"):
            if entry.get(split) is None:
                continue
            given = entry[split] if entry["format"] == "npy" else {"": entry[split]}
            found = example["train"] if entry["format"] == "npy" else {"": example[split]}
            for part, path in given.items():
                target = root / path
                target.parent.mkdir(parents=True, exist_ok=True)
                if entry["format"] == "images":
                    shutil.copytree(found[part], str(target))
                elif entry["format"] == "csv":
                    header, rest = Path(found[part]).read_text().split("\n", 1)
                    label = entry.get("label", "label")
                    target.write_text(header.replace("species", label) + "\n" + rest)
                else:
                    shutil.copy(found[part], str(target))


@pytest.mark.parametrize("where, text", SNIPPETS, ids=[where for where, _ in SNIPPETS])
def test_every_config_snippet_is_a_valid_config(where, text, monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)  # files a config names are relative to the working directory
    snippet = yaml.safe_load(text)
    if snippet.get("own_datasets"):  # the data files it names, in a folder beside the examples
        (tmp_path / "examples").symlink_to(REPO / "examples")
        write_own_datasets(snippet["own_datasets"], tmp_path)
        monkeypatch.chdir(tmp_path)
    if REQUIRED <= set(snippet):
        config = snippet
    else:
        config = copy.deepcopy(yaml.safe_load(base_of(text).read_text()))
        config.update(snippet)
    validation.validate_config(config, SCHEMA, SCHEMA_PATH)
    assert list(matrix.runs(config))
