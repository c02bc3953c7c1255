"""report_browser.check_report on tiny real Snakemake reports, in real Chromium.

A tiny workflow (a matplotlib job and a shell job) writes a plot in two variants (a
'legend' label with two values, which the report shows as a toggle), a second plot in
another subcategory, a CSV table and an HTML table; one Snakemake start runs it and
then writes the report (--report-after-run). Built sound, every result must check out;
built broken (garbage bytes as PNG, a CSV with a header only, an HTML table without
body rows), each broken result must be named in the problems, and only those.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import report_browser
from testkit import needs_browser

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))

SNAKEFILE = textwrap.dedent(
    """
    BROKEN = bool(config.get("broken", 0))
    ROWS = "" if BROKEN else "jax,1.5\\ntorch,2.0\\n"
    CELLS = "" if BROKEN else "<tr><td>jax</td><td>1.5</td></tr><tr><td>torch</td><td>2</td></tr>"

    report: "report/workflow.rst"


    rule all:
        input:
            "plots/curve.png",
            "plots/curve_nolegend.png",
            "plots/latency.png",
            "tables/scores.csv",
            "tables/scores.html",


    # One job for the plots: each run: job costs a Python process of its own.
    rule plots:
        output:
            curve=report(
                "plots/curve.png",
                caption="report/plot.rst",
                category="Plots",
                subcategory="training",
                labels={"figure": "loss", "legend": "yes"},
            ),
            curve_nolegend=report(
                "plots/curve_nolegend.png",
                caption="report/plot.rst",
                category="Plots",
                subcategory="training",
                labels={"figure": "loss", "legend": "no"},
            ),
            latency=report(
                "plots/latency.png",
                caption="report/plot.rst",
                category="Plots",
                subcategory="inference",
                labels={"figure": "latency"},
            ),
        run:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            for path, legend in (
                (output.curve, True),
                (output.curve_nolegend, False),
                (output.latency, False),
            ):
                figure, axes = plt.subplots(figsize=(3, 2))
                axes.plot([1, 2, 3], [3, 1, 2], label="loss")
                if legend:
                    axes.legend()
                figure.savefig(path)
                plt.close(figure)
            if BROKEN:
                with open(output.curve, "wb") as handle:
                    handle.write(b"this is not a PNG")


    rule tables:
        output:
            csv=report("tables/scores.csv", caption="report/table.rst", category="Tables"),
            html=report("tables/scores.html", caption="report/table.rst", category="Tables"),
        params:
            csv="backend,seconds\\n" + ROWS,
            html="<table><thead><tr><th>backend</th><th>seconds</th></tr></thead>"
            + "<tbody>" + CELLS + "</tbody></table>",
        shell:
            "printf '%s' {params.csv:q} > {output.csv}; printf '%s' {params.html:q} > {output.html}"
    """
)

BROKEN_RESULTS = ["plots/curve.png", "tables/scores.csv", "tables/scores.html"]
SOUND_RESULTS = ["plots/curve_nolegend.png", "plots/latency.png"]


def build_report(workdir, broken):
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "Snakefile").write_text(SNAKEFILE)
    (workdir / "report").mkdir()
    (workdir / "report" / "workflow.rst").write_text("A tiny workflow for the report check.\n")
    (workdir / "report" / "plot.rst").write_text("A line plot, drawn by matplotlib.\n")
    (workdir / "report" / "table.rst").write_text("Seconds per backend.\n")
    done = subprocess.run(
        [SNAKEMAKE, "-j1", "--config", "broken={:d}".format(broken)]
        + ["--report", "report.html", "--report-after-run"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, "snakemake failed:\n{}".format(done.stderr[-4000:])
    return workdir / "report.html"


@pytest.fixture(scope="module")
def sound_check(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("sound")
    report = build_report(workdir / "workflow", broken=False)
    return report_browser.check_report(report, workdir / "shots")


@pytest.fixture(scope="module")
def broken_check(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("broken")
    report = build_report(workdir / "workflow", broken=True)
    return report_browser.check_report(report, workdir / "shots")


@needs_browser
def test_sound_report_has_every_result_opened_and_no_problems(sound_check):
    assert sound_check["problems"] == []
    assert sound_check["results"] == 5
    assert sound_check["opened"] == 5
    assert sound_check["images"] == 3
    assert sound_check["tables"] == 2
    assert sound_check["table_rows"] == {"tables/scores.csv": 2, "tables/scores.html": 2}


@needs_browser
def test_screenshots_show_landing_category_plot_and_table(sound_check):
    names = [Path(shot).name for shot in sound_check["screenshots"]]
    for prefix in ("01_landing_page", "02_category_listing", "03_plot_opened", "04_table_opened"):
        assert any(name.startswith(prefix) for name in names), (prefix, names)
    for shot in sound_check["screenshots"]:
        assert Path(shot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@needs_browser
def test_broken_results_are_each_named_in_the_problems(broken_check):
    problems = broken_check["problems"]
    for path in BROKEN_RESULTS:
        assert any(path in problem for problem in problems), (path, problems)
    for path in SOUND_RESULTS:
        assert not any(path in problem for problem in problems), (path, problems)
    assert broken_check["opened"] == 5
    assert broken_check["table_rows"] == {"tables/scores.csv": 0, "tables/scores.html": 0}


def test_missing_chromedriver_fails_with_the_install_hint(tmp_path, monkeypatch):
    report = tmp_path / "report.html"
    report.write_text("<html></html>")
    monkeypatch.setattr(report_browser, "CHROMEDRIVER", str(tmp_path / "chromedriver"))
    with pytest.raises(RuntimeError, match="apt-get install chromium chromium-driver"):
        report_browser.check_report(report, tmp_path / "shots")
