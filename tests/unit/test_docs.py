"""The documentation's promises: every relative link in the README, docs/,
config/README.md and the guides beside the code leads to a file; the README
stays short; config/README.md describes every top-level key of the config's
schema in the schema's words (every key at every level:
test_config_readme.py); how long a command takes is measured in one table
(docs/measured-times.md), which the other pages link to instead of repeating."""

import re

import pytest
import yaml

from dlbench.registry import BUILT_IN
from testkit import REPO

PAGES = [
    REPO / "README.md",
    REPO / "config" / "README.md",
    REPO / "records" / "gpu" / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "src" / "dlbench").rglob("ADDING_*.md")),
]
LINK = re.compile(r"\]\(([^)\s#]+)(#[^)\s]*)?\)")


def outside_code(text):
    return re.sub(r"```.*?```", "", text, flags=re.DOTALL)


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(REPO)))
def test_every_relative_link_leads_to_a_file(page):
    targets = LINK.findall(outside_code(page.read_text()))
    broken = [
        target
        for target, _ in targets
        if not re.match(r"^[a-z]+:", target) and not (page.parent / target).exists()
    ]
    assert broken == []


def test_the_readme_is_short_and_shows_its_picture():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) < 200
    assert "![" in text and "make smoke" in text and "make test" in text


def test_config_readme_gives_every_key_in_the_schemas_words():
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    text = (REPO / "config" / "README.md").read_text()
    # the top level's section (`.`), up to the next heading: the nested
    # objects' keys are tests/unit/test_config_readme.py's
    top_level = re.split(r"^#+ .*\(`\.`\)$", text, flags=re.M)[1].split("\n#")[0]
    rows = {
        match.group(1): match.group(0)
        for match in re.finditer(r"^\| `(\w+)` \|.*$", top_level, re.M)
    }
    assert set(rows) == set(schema["properties"])
    for key, entry in schema["properties"].items():
        description = " ".join(str(entry.get("description", "")).split()).replace("|", "\\|")
        assert description in rows[key], key


def test_the_configuration_page_lists_every_dataset_input_kind_and_optimizer():
    from dlbench import catalog

    text = (REPO / "docs" / "configuration.md").read_text()
    section = text.split("## Datasets, input kinds, losses and optimizers")[1].split("\n## ")[0]
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    optimizer = schema["properties"]["workloads"]["items"]["properties"]["optimizer"]
    named = [*catalog.DATASETS, *catalog.INPUT_SHAPES, *optimizer["properties"]["name"]["enum"]]
    assert [name for name in named if "`{}`".format(name) not in section] == []


def test_the_questions_page_says_where_each_published_column_runs():
    """Its table of published columns: the GPU column and the workloads a
    native backend implements, as the catalog has them."""
    from dlbench import catalog

    text = (REPO / "docs" / "questions.md").read_text()
    rows = re.findall(r"^\| [^|]+ \| `([\w-]+)` \| ([^|]+) \| ([^|]+) \|", text, re.M)
    assert len(rows) >= 11
    for backend, cpu, gpu in rows:
        runs_on_a_gpu = any(
            catalog.BACKENDS[backend].devices_not_applicable(task, 1, "gpu") is None
            for task in catalog.BACKENDS[backend]["tasks"]
        )
        assert (gpu.strip() != "no") == runs_on_a_gpu, backend
        runs_on_the_cpu = (
            catalog.BACKENDS[backend].devices_not_applicable("infer", 0, "gpu") is None
        )
        assert (cpu.strip() != "no") == runs_on_the_cpu, backend
        if cpu.strip() not in ("yes", "no"):
            listed = sorted(model.strip() for model in cpu.split(","))
            assert listed == BUILT_IN.models_of(backend), backend


def test_each_question_has_its_config_and_every_config_a_question():
    text = (REPO / "docs" / "questions.md").read_text()
    configs = sorted(path.name for path in (REPO / "config" / "questions").glob("*.yaml"))
    assert sorted(set(re.findall(r"`([\w-]+\.yaml)`", text)) & set(configs)) == configs
    for name in configs:
        assert "config/questions/{}".format(name) in text, name


def test_the_published_tables_run_each_workload_as_the_full_benchmark_does():
    full = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    published = yaml.safe_load(
        (REPO / "config" / "questions" / "published-tables.yaml").read_text()
    )
    assert published["workloads"] == full["workloads"]
    assert set(published["backends"]) == set(full["backends"])


# Durations ("19 minutes", "14:25") outside the table of measured times and
# the results pages, where they are results; "under 15 minutes" is a target.
DURATION = re.compile(r"(?<!under )\b(\d+(?: to \d+)? minutes|\d{1,2}:\d\d(?::\d\d)?)\b")
WITH_TIMES = ("measured-times.md", "results-h200.md")


@pytest.mark.parametrize(
    "page",
    [page for page in PAGES if page.name not in WITH_TIMES],
    ids=lambda path: str(path.relative_to(REPO)),
)
def test_command_times_come_from_the_one_measured_table(page):
    typed = DURATION.findall(outside_code(page.read_text()))
    assert typed == [], "times belong in docs/measured-times.md, linked from here"
