"""The documentation's promises: every relative link in the README, docs/,
config/README.md and the guides beside the code leads to a file; the README
stays short; config/README.md describes every key of the config's schema in
the schema's words."""

import re

import pytest
import yaml

from testkit import REPO

PAGES = [
    REPO / "README.md",
    REPO / "config" / "README.md",
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
    rows = {
        match.group(1): match.group(0)
        for match in re.finditer(
            r"^\| `(\w+)` \|.*$", (REPO / "config" / "README.md").read_text(), re.M
        )
    }
    assert set(rows) == set(schema["properties"])
    for key, entry in schema["properties"].items():
        description = " ".join(str(entry.get("description", "")).split()).replace("|", "\\|")
        assert description in rows[key], key
