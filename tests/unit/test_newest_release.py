"""Is the newest release faster? ``newest`` resolved by pip itself against a
package index the test writes (a folder in PEP 503's simple layout, no
network), kept until asked again, the release before the pin where the pin
is the newest, nothing where the index does not answer; asv's verdict on a
pair; the op categories that changed; a series of releases with its steps
(the versions table itself: test_versions.py)."""

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from test_versions import version_frames

from dlbench.analysis import plots_comparisons, version_history, version_verdicts, versions
from dlbench.environments import newest, variants
from dlbench.plan import matrix, validation
from testkit import REPO

SCHEMA_PATH = REPO / "workflow" / "schemas" / "config.schema.yaml"


def simple_index(root, releases):
    """A package index in the simple layout: a page per distribution naming
    a wheel per version, for any Python 3 (pip lists them, never fetches them)."""
    for name, versions_of in releases.items():
        page = Path(root, name)
        page.mkdir(parents=True, exist_ok=True)
        links = "".join(
            '<a href="{0}-{1}-py3-none-any.whl">{0}-{1}-py3-none-any.whl</a>\n'.format(
                name.replace("-", "_"), version
            )
            for version in versions_of
        )
        (page / "index.html").write_text("<html><body>\n{}</body></html>\n".format(links))
    return Path(root).as_uri()


def env_file(folder, backend, index, pins):
    spec = {
        "name": backend,
        "dependencies": ["python=3.11", "pip", {"pip": ["--index-url " + index] + pins}],
    }
    Path(folder).mkdir(parents=True, exist_ok=True)
    Path(folder, backend + ".yaml").write_text(yaml.safe_dump(spec))


@pytest.fixture
def own_pip(monkeypatch):
    """pip with no configuration but the env file's: this machine's own
    indexes and wheel folders left out."""
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_CONSTRAINT"):
        monkeypatch.delenv(name, raising=False)


JAX_PINS = ["keras==3.15.1", "jax[cpu]==0.10.2", "jaxlib==0.10.2"]


def resolved(tmp_path, versions_of, refresh=False, backend="keras-jax", said=None):
    config = {"versions": {backend: versions_of}}
    newest.resolve(
        config,
        tmp_path / "envs",
        path=tmp_path / "newest.json",
        refresh=refresh,
        say=(said.append if said is not None else lambda line: None),
    )
    return config["versions"][backend]


def test_the_newest_release_the_framework_has_for_the_envs_python(tmp_path, own_pip):
    index = simple_index(
        tmp_path / "simple",
        {"jax": ["0.10.1", "0.10.2", "0.11.0", "0.12.0rc1"], "jaxlib": ["0.10.2", "0.11.0"]},
    )
    env_file(tmp_path / "envs", "keras-jax", index, JAX_PINS)
    said = []
    # jax and jaxlib together; a pre-release is not a release
    assert resolved(tmp_path, ["newest", "pinned"], said=said) == [
        {"jax[cpu]": "0.11.0", "jaxlib": "0.11.0"}
    ]
    assert said[0].startswith("versions.keras-jax: newest: jax[cpu] 0.11.0, jaxlib 0.11.0 (the ")


def test_the_resolution_is_kept_until_asked_again_and_the_earlier_stays(tmp_path, own_pip):
    releases = {"jax": ["0.10.2", "0.11.0"], "jaxlib": ["0.10.2", "0.11.0"]}
    env_file(tmp_path / "envs", "keras-jax", simple_index(tmp_path / "simple", releases), JAX_PINS)
    assert resolved(tmp_path, ["newest"]) == [{"jax[cpu]": "0.11.0", "jaxlib": "0.11.0"}]
    releases = {"jax": ["0.10.2", "0.11.0", "0.12.0"], "jaxlib": ["0.10.2", "0.11.0", "0.12.0"]}
    simple_index(tmp_path / "simple", releases)
    assert resolved(tmp_path, ["newest"]) == [{"jax[cpu]": "0.11.0", "jaxlib": "0.11.0"}]
    assert resolved(tmp_path, ["newest"], refresh=True) == [
        {"jax[cpu]": "0.11.0", "jaxlib": "0.11.0"},
        {"jax[cpu]": "0.12.0", "jaxlib": "0.12.0"},
    ]


def test_where_the_pin_is_the_newest_the_release_before_it_runs(tmp_path, own_pip):
    releases = {"jax": ["0.10.1", "0.10.2"], "jaxlib": ["0.10.1", "0.10.2"], "keras": ["3.15.1"]}
    env_file(tmp_path / "envs", "keras-jax", simple_index(tmp_path / "simple", releases), JAX_PINS)
    said = []
    assert resolved(tmp_path, ["newest", {"keras": "newest"}], said=said) == [
        {"jax[cpu]": "0.10.1", "jaxlib": "0.10.1"}
    ]
    assert "the newest release, 0.10.2, is the pin: the release before it instead" in said[0]
    assert "the newest release, 3.15.1, is the pin, and the index has none before it" in said[1]


def test_a_cpu_build_takes_only_cpu_builds(tmp_path, own_pip):
    index = simple_index(tmp_path / "simple", {"torch": ["2.13.0+cpu", "2.14.0", "2.15.0"]})
    env_file(tmp_path / "envs", "keras-torch", index, ["keras==3.15.1", "torch==2.13.0+cpu"])
    said = []
    assert resolved(tmp_path, ["newest"], backend="keras-torch", said=said) == []
    assert "2.13.0+cpu, is the pin, and the index has none before it" in said[0]
    simple_index(tmp_path / "simple", {"torch": ["2.13.0+cpu", "2.14.0+cpu", "2.15.0"]})
    assert resolved(tmp_path, ["newest"], backend="keras-torch", refresh=True) == [
        {"torch": "2.14.0+cpu"}
    ]


def test_without_an_answer_from_the_index_only_the_pins_are_planned(tmp_path, own_pip):
    env_file(tmp_path / "envs", "keras-jax", "http://127.0.0.1:9/simple", JAX_PINS)
    said = []
    assert resolved(tmp_path, ["newest"], said=said) == []
    (line,) = said
    assert line.startswith("versions.keras-jax: newest not resolved (jax[cpu]: ")
    assert line.endswith("): planning its pinned versions alone")
    assert not (tmp_path / "newest.json").exists()


def test_the_config_plans_the_resolved_release_as_a_variant(
    tmp_path, own_pip, smoke_config, monkeypatch
):
    releases = {"jax": ["0.10.2", "0.11.0"], "jaxlib": ["0.10.2", "0.11.0"]}
    env_file(tmp_path / "envs", "keras-jax", simple_index(tmp_path / "simple", releases), JAX_PINS)
    config = dict(smoke_config, versions={"keras-jax": ["newest"]})
    (tmp_path / "examples").symlink_to(REPO / "examples")  # the config's own models
    monkeypatch.chdir(tmp_path)  # resources/versions/newest.json is the working directory's
    validation.validate_config(
        config, validation.load_schema(SCHEMA_PATH), SCHEMA_PATH, envs_dir=tmp_path / "envs"
    )
    assert sorted(variants.variants_of(config, "keras-jax")) == [
        "jax-0.11.0+jaxlib-0.11.0",
        "pinned",
    ]
    assert (tmp_path / newest.RESOLVED).is_file()
    assert {r.versions for r in matrix.runs(config) if r.backend == "keras-jax"} == {
        "pinned",
        "jax-0.11.0+jaxlib-0.11.0",
    }


def test_newest_of_a_framework_the_env_file_does_not_pin_is_refused(tmp_path):
    env_file(tmp_path / "envs", "keras-jax", "http://127.0.0.1:9/simple", ["keras==3.15.1"])
    with pytest.raises(ValueError, match="its env file pins none of jax's distributions"):
        resolved(tmp_path, ["newest"])


# asv's verdict


def samples(median, spread=0.01, count=9, seed=0):
    rng = np.random.RandomState(seed)
    values = median * (1 + spread * rng.standard_normal(count))
    return [values[:3], values[3:6], values[6:]]


def test_a_release_is_faster_only_past_the_factor_and_with_a_significant_test():
    assert version_verdicts.verdict(samples(1.0), samples(0.8, seed=1), 1.1, 0.05)[0] == "faster"
    assert version_verdicts.verdict(samples(1.0), samples(1.2, seed=1), 1.1, 0.05)[0] == "slower"
    # significant, but within the factor: the same
    found, ratio, p = version_verdicts.verdict(samples(1.0), samples(0.95, seed=1), 1.1, 0.05)
    assert found == "same" and p < 0.05 and 1.0 < ratio < 1.1
    # past the factor, but two samples each cannot tell
    found, _, p = version_verdicts.verdict([[1.0, 1.3]], [[0.7, 1.0]], 1.1, 0.05)
    assert found == "same" and p >= 0.05


def test_the_versions_table_gives_the_verdict_and_the_op_categories_that_changed():
    frames = version_frames({"jax-0.9.2+jaxlib-0.9.2": ("0.9.2", 2.0), "pinned": ("0.10.2", 1.0)})
    ops = pd.DataFrame(
        [
            dict(
                machine="m",
                dataset="digits",
                model="mlp",
                backend="keras-jax",
                devices=0,
                threads="all",
                precision="float32",
                compile="auto",
                versions=version,
                window_ms_per_step=step,
                matmul_ms=matmul,
                elementwise_ms=1.0,
            )
            for version, step, matmul in (
                ("jax-0.9.2+jaxlib-0.9.2", 6.0, 4.0),
                ("pinned", 3.0, 1.0),
            )
        ]
    )
    (row,) = versions.compare(*frames, draws=50, ops=ops).to_dict("records")
    assert row["verdict"] == "faster" and row["factor"] == 1.1 and row["mann_whitney_p"] < 0.05
    assert row["op_changes"] == "matrix products 4.00 -> 1.00 ms (-75 %)"
    shown = versions.table(pd.DataFrame([row]))
    assert shown["the newer is"].iloc[0].startswith("faster (p ")
    assert "1.1" in versions.caption(1.1, 0.05) and "Mann-Whitney" in versions.caption(1.1, 0.05)


# A series of releases


def test_a_step_is_found_where_the_level_changed_not_only_between_neighbours():
    # every neighbour within 10 % of the next, the whole 25 % faster
    levels = [1.0, 1.0, 1.0, 0.95, 0.9, 0.85, 0.8, 0.75]
    found = version_verdicts.steps(
        [samples(level, seed=i) for i, level in enumerate(levels)], 1.1, 0.05
    )
    assert found and all(verdict == "faster" for verdict, _, _ in found.values())
    neighbours = [
        version_verdicts.verdict(samples(a, seed=i), samples(b, seed=i + 1), 1.1, 0.05)[0]
        for i, (a, b) in enumerate(zip(levels, levels[1:]))
    ]
    assert set(neighbours) == {"same"}
    flat = [samples(1.0, seed=i) for i in range(4)]
    assert version_verdicts.steps(flat, 1.1, 0.05) == {}


def test_three_releases_make_a_series_with_its_step_marked():
    frames = version_frames(
        {
            "jax-0.9.2+jaxlib-0.9.2": ("0.9.2", 1.0),
            "jax-0.10.1+jaxlib-0.10.1": ("0.10.1", 1.0),
            "pinned": ("0.10.2", 0.6),
        }
    )
    found = version_history.series(*frames, factor=1.1, alpha=0.05)
    assert list(found["release"]) == [
        "jax 0.9.2, keras 3.15.1",
        "jax 0.10.1, keras 3.15.1",
        "jax 0.10.2, keras 3.15.1",
    ]
    assert list(found["step"].fillna("")) == ["", "", "faster"]
    assert found["relative_to_first"].iloc[-1] == pytest.approx(0.6, rel=0.02)
    two = version_frames({"jax-0.9.2+jaxlib-0.9.2": ("0.9.2", 1.0), "pinned": ("0.10.2", 0.6)})
    assert version_history.series(*two).empty  # a pair is the versions table's
    figure = plots_comparisons.version_history_figure(found)
    (axis,) = figure.axes
    assert [t.get_text() for t in axis.get_xticklabels()] == list(found["release"])
    assert any(text.get_text() == "faster from here" for text in axis.texts)
    shown = version_history.table(found)
    assert shown["step"].iloc[-1].startswith("faster from here (")
