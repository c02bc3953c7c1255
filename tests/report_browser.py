"""Checks a Snakemake HTML report (``snakemake --report``) in a real headless Chromium.

``check_report(html_path, screenshot_dir)`` uses the report the way a reader does: it
opens it, clicks every category (and subcategory) of the menu and, in each listing,
the eye button of every result. In Snakemake 9 the eye button shows images in the
report's viewer and HTML (or PDF) results in an iframe; any other result, CSV and TSV
tables included, is a download link, so the file is downloaded and read. After each
step every image on the page must have loaded and every table must have a body row.
Results that the UI does not open are checked from their data instead: images are
decoded in the browser, tables parsed. Problems are collected, not raised.

Chromium and its chromedriver come from the system (Debian/Ubuntu: ``apt-get install
chromium chromium-driver``); Selenium Manager is never asked to download a browser.
"""

import csv
import io
import os
import re
import tempfile
import time
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WINDOW_SIZE = "1600,1100"
DELIMITERS = {"text/csv": ",", "text/tab-separated-values": "\t"}
UNFINISHED_DOWNLOAD = (".crdownload", ".tmp")

# Every image and table of the current document: images by the file name in their
# data URI (or their address), tables with their count of body rows.
SCAN_PAGE_JS = """
function imageName(img) {
    const src = img.getAttribute('src') || '';
    const match = src.match(/filename=([^;,]+)/);
    return match ? match[1] : src.slice(0, 80);
}
function bodyRows(table) {
    return Array.from(table.rows).filter(function (row) {
        return row.parentElement.tagName !== 'THEAD'
            && Array.from(row.cells).some(function (cell) { return cell.tagName === 'TD'; });
    }).length;
}
return {
    loading: Array.from(document.images).filter(i => !i.complete).map(imageName),
    broken: Array.from(document.images)
        .filter(i => i.complete && i.naturalWidth === 0).map(imageName),
    tables: Array.from(document.querySelectorAll('table')).map(bodyRows),
};
"""

# The result whose viewer element (img or iframe outside the menu) is on the page.
SHOWN_RESULT_JS = """
const path = arguments[0];
const shown = Array.from(document.querySelectorAll('img, iframe')).find(
    el => !el.closest('nav') && el.getAttribute('src') === results[path].data_uri);
return shown ? shown.tagName.toLowerCase() : null;
"""

# Decodes the data of the given results: images with new Image(), the rest as text.
DECODE_RESULTS_JS = """
const paths = arguments[0];
const done = arguments[arguments.length - 1];
Promise.all(paths.map(path => new Promise(resolve => {
    const result = results[path];
    if (result.mime_type.startsWith('image/')) {
        const img = new Image();
        img.onload = () => resolve([path, 'image', img.naturalWidth]);
        img.onerror = () => resolve([path, 'image', 0]);
        img.src = result.data_uri;
    } else {
        fetch(result.data_uri).then(r => r.text())
            .then(text => resolve([path, 'text', text]))
            .catch(error => resolve([path, 'error', String(error)]));
    }
}))).then(done);
"""


def check_report(html_path, screenshot_dir, wait_seconds=20, every_result=False):
    """Clicks through the report at html_path in headless Chromium; returns a summary.

    Screenshots (landing page, first category listing, first plot opened, first table
    opened; with ``every_result``, also every result the viewer shows) are written to
    screenshot_dir. The summary is a dict:

    - ``results``: how many results the report holds
    - ``opened``: how many of them the UI opened (shown in the viewer or downloaded)
    - ``images``: result images checked: shown in the viewer and loaded (or, where the
      UI did not open them, decoded from their data)
    - ``tables``: result tables checked (CSV/TSV downloads, tables in HTML results)
    - ``table_rows``: {result path: body rows} for those tables (``path#n`` where an
      HTML result holds several tables)
    - ``screenshots``: paths of the screenshots written
    - ``problems``: one sentence per problem found; empty when the report is sound
    - ``seconds``: wall time of the check

    Raises FileNotFoundError for a missing report and RuntimeError when Chromium or
    chromedriver is not installed; everything else found is a problem in the summary.
    """
    html_path = Path(html_path).resolve()
    if not html_path.is_file():
        raise FileNotFoundError("no report at {}".format(html_path))
    for program in (CHROMIUM, CHROMEDRIVER):
        if not os.access(program, os.X_OK):
            raise RuntimeError(
                "{} is missing: the report check needs Chromium and its driver "
                "(apt-get install chromium chromium-driver)".format(program)
            )
    started = time.monotonic()
    screenshot_dir = Path(screenshot_dir)
    screenshot_dir.mkdir(parents=True, exist_ok=True)
    # Chromium's own temporary folders too, so that none is left in /tmp
    with (
        tempfile.TemporaryDirectory(prefix="report-downloads-") as downloads,
        tempfile.TemporaryDirectory(prefix="report-browser-") as scratch,
    ):
        driver = start_browser(downloads, scratch)
        try:
            checker = ReportChecker(driver, Path(downloads), screenshot_dir, wait_seconds)
            checker.every_result = every_result
            summary = checker.check(html_path.as_uri())
        finally:
            driver.quit()
    summary["seconds"] = round(time.monotonic() - started, 1)
    return summary


def start_browser(download_dir, temporary_dir):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=" + WINDOW_SIZE,
    ):
        options.add_argument(argument)
    options.add_experimental_option(
        "prefs",
        {"download.default_directory": str(download_dir), "download.prompt_for_download": False},
    )
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=CHROMEDRIVER, env=dict(os.environ, TMPDIR=str(temporary_dir)))
    return webdriver.Chrome(service=service, options=options)


def count_body_rows(text, delimiter):
    """Data rows of a delimited table: non-blank rows after the header."""
    rows = [row for row in csv.reader(io.StringIO(text), delimiter=delimiter) if any(row)]
    return max(len(rows) - 1, 0)


def slug(text):
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")


class ReportChecker:
    """One pass over one report in one browser; check() returns the summary."""

    def __init__(self, driver, download_dir, screenshot_dir, wait_seconds):
        self.driver = driver
        self.download_dir = download_dir
        self.screenshot_dir = screenshot_dir
        self.wait_seconds = wait_seconds
        self.results = {}
        self.opened = set()
        self.images = 0
        self.table_rows = {}
        self.screenshots = []
        self.problems = []
        self.first_table_row = None
        self.every_result = False

    def check(self, url):
        self.driver.get(url)
        if self.wait_for_app():
            self.screenshot("01_landing_page")
            self.check_page("landing page")
            self.results = self.driver.execute_script(
                "return Object.fromEntries(Object.entries(results).map("
                "([path, result]) => [path, {mime: result.mime_type, name: result.name}]))"
            )
            categories = self.driver.execute_script("return categories")
            self.check_categories(categories)
            self.screenshot_first_table()
            self.check_data_of_unopened_results()
        self.check_console()
        return {
            "results": len(self.results),
            "opened": len(self.opened),
            "images": self.images,
            "tables": len(self.table_rows),
            "table_rows": self.table_rows,
            "screenshots": self.screenshots,
            "problems": self.problems,
        }

    # --- helpers -----------------------------------------------------------------

    def problem(self, text):
        if text not in self.problems:
            self.problems.append(text)

    def wait(self, condition):
        """Polls condition(driver) until truthy; returns its value, None on timeout."""
        try:
            return WebDriverWait(self.driver, self.wait_seconds, poll_frequency=0.05).until(
                condition
            )
        except TimeoutException:
            return None

    def screenshot(self, name):
        path = self.screenshot_dir / (name + ".png")
        self.driver.save_screenshot(str(path))
        self.screenshots.append(str(path))

    def links(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def link_with_text(self, css, text):
        for link in self.links(css):
            if link.get_attribute("textContent").strip() == text:
                return link
        return None

    def listing_rows(self):
        return self.links("nav div.p-3 table tbody tr")

    # --- landing page and navigation -------------------------------------------------

    def wait_for_app(self):
        """The menu is drawn and the landing page's rule graph (if shown) is rendered."""
        rendered = self.wait(
            lambda d: (
                d.find_elements(By.CSS_SELECTOR, "#app nav ul li a")
                and not d.find_elements(By.CSS_SELECTOR, "div#rulegraph:not(:has(canvas, svg))")
            )
        )
        if not rendered:
            self.screenshot("01_landing_page_not_rendered")
            self.problem("the report's app did not render its menu and landing page")
        return bool(rendered)

    def menu_labels(self, categories):
        """(menu label, category): a single category is shown as 'Results'."""
        if len(categories) == 1:
            return [("Results", next(iter(categories)))]
        return [(category, category) for category in sorted(categories, key=str.casefold)]

    def check_categories(self, categories):
        for label, category in self.menu_labels(categories):
            subcategories = sorted(categories[category])
            if len(subcategories) == 1:
                listings = [(category, None)]
            else:
                listings = [(category + " / " + sub, sub) for sub in subcategories]
            for where, subcategory in listings:
                if self.open_listing(label, subcategory):
                    if not any("02_category" in shot for shot in self.screenshots):
                        self.screenshot("02_category_listing_" + slug(where))
                    self.check_listing(where, (label, subcategory))

    def open_listing(self, menu_label, subcategory):
        """Home, then the category in the menu, then the subcategory if there are several."""
        self.links("nav ol li a")[0].click()
        category_link = self.wait(lambda d: self.link_with_text("nav div.p-3 a", menu_label))
        if category_link is None:
            self.problem("category {!r} is not in the report's menu".format(menu_label))
            return False
        category_link.click()
        if subcategory is not None:
            link = self.wait(lambda d: self.link_with_text("nav div.p-3 ul li a", subcategory))
            if link is None:
                self.problem(
                    "subcategory {!r} of {!r} is not listed".format(subcategory, menu_label)
                )
                return False
            link.click()
        if not self.wait(lambda d: self.listing_rows()):
            self.problem("the listing of {!r} shows no results".format(menu_label))
            return False
        return True

    def toggle_choices(self):
        """Labels of the listing's toggle (a label with two values), or [None]."""
        labels = self.links("nav div.p-3 fieldset label")
        return [label.get_attribute("for") for label in labels] or [None]

    def choose_toggle(self, choice):
        if choice is not None:
            self.driver.find_element(By.CSS_SELECTOR, 'label[for="{}"]'.format(choice)).click()
            self.wait(lambda d: d.find_element(By.ID, choice).is_selected())

    def check_listing(self, where, listing):
        for choice in self.toggle_choices():
            self.choose_toggle(choice)
            self.check_page(where)
            for index in range(len(self.listing_rows())):
                try:
                    self.open_row(index, where, listing + (choice,))
                except WebDriverException as error:
                    self.problem(
                        "{}: row {} could not be opened: {}".format(where, index + 1, error.msg)
                    )

    # --- opening one result ----------------------------------------------------------

    def open_row(self, index, where, listing):
        # Snakemake's Button passes its iconName prop on to the <a>: it names the button.
        eye = self.listing_rows()[index].find_elements(By.CSS_SELECTOR, 'a[iconname="eye"]')
        if not eye:
            self.problem("{}: row {} has no view button".format(where, index + 1))
            return
        if eye[0].get_dom_attribute("download") is not None:
            self.open_download(eye[0], where, listing + (index,))
        else:
            self.open_in_viewer(eye[0], where)

    def open_in_viewer(self, eye, where):
        # The report's App keeps itself in the global `app`; every view change draws a
        # new renderTrigger, and resultPath says which result the viewer shows.
        trigger = self.driver.execute_script("return app.state.renderTrigger")
        eye.click()
        if not self.wait(lambda d: d.execute_script("return app.state.renderTrigger") != trigger):
            self.problem("{}: a view button opened nothing".format(where))
            return
        path = self.driver.execute_script("return app.state.resultPath")
        where = "{} > {}".format(where, path)
        shown = self.wait(lambda d: d.execute_script(SHOWN_RESULT_JS, path))
        if shown is None:
            self.problem("{}: the viewer does not show it".format(where))
            return
        self.opened.add(path)
        if shown == "img":
            self.images += 1
        elif self.results[path]["mime"] == "text/html":
            self.check_html_result(path, where)
        self.check_page(where)
        if shown == "img" and not any("03_plot" in shot for shot in self.screenshots):
            self.screenshot("03_plot_opened_" + slug(self.results[path]["name"]))
        elif self.every_result:
            self.screenshot("05_" + slug(path))

    def check_html_result(self, path, where):
        frame = self.driver.find_element(By.CSS_SELECTOR, "iframe")
        self.driver.switch_to.frame(frame)
        try:
            loaded = self.wait(
                lambda d: d.execute_script("return document.readyState") == "complete"
            )
            if not loaded:
                self.problem("{}: the HTML result did not finish loading".format(where))
            tables = self.check_page(where)
        finally:
            self.driver.switch_to.default_content()
        for number, rows in enumerate(tables, 1):
            self.table_rows[path if len(tables) == 1 else "{}#{}".format(path, number)] = rows
        if tables and not any("04_table" in shot for shot in self.screenshots):
            self.screenshot("04_table_opened_" + slug(self.results[path]["name"]))

    def open_download(self, eye, where, position):
        path = self.driver.execute_script(
            "return Object.keys(results).find(p => results[p].data_uri === arguments[0])",
            eye.get_dom_attribute("href"),
        )
        if path is None:
            self.problem("{}: a download link matches no result".format(where))
            return
        where = "{} > {}".format(where, path)
        before = set(os.listdir(str(self.download_dir)))
        eye.click()
        arrived = self.wait(lambda d: self.new_download(before))
        if arrived is None:
            self.problem("{}: its download link delivered no file".format(where))
            return
        self.opened.add(path)
        text = arrived.read_text(errors="replace")
        self.check_data(path, where, "text", text)
        if path in self.table_rows and self.first_table_row is None:
            self.first_table_row = (path, position)

    def new_download(self, before):
        """The file a click downloaded, once it is complete. Chromium writes
        a download under a hidden temporary name (.org.chromium.Chromium.*)
        or with .crdownload, then renames it."""
        names = set(os.listdir(str(self.download_dir)))
        if any(name.endswith(UNFINISHED_DOWNLOAD) or name.startswith(".") for name in names):
            return None
        new = sorted(names - before)
        return self.download_dir / new[0] if new else None

    # --- checks ----------------------------------------------------------------------

    def check_page(self, where):
        """Images and tables of the current document; returns the tables' body rows."""
        self.wait(lambda d: not d.execute_script(SCAN_PAGE_JS)["loading"])
        scan = self.driver.execute_script(SCAN_PAGE_JS)
        for name in scan["loading"]:
            self.problem("{}: image {} is still loading".format(where, name))
        for name in scan["broken"]:
            self.problem("{}: image {} is shown but did not load".format(where, name))
        for number, rows in enumerate(scan["tables"], 1):
            if rows == 0:
                self.problem("{}: table {} on the page has no body rows".format(where, number))
        return scan["tables"]

    def check_data(self, path, where, kind, content):
        """Verdict on one result's data: decoded image width, or its text."""
        if kind == "image":
            self.images += 1
            if not content:
                self.problem("{}: the image data does not decode".format(where))
        elif kind == "error":
            self.problem("{}: its data could not be read: {}".format(where, content))
        elif self.results[path]["mime"] in DELIMITERS:
            rows = count_body_rows(content, DELIMITERS[self.results[path]["mime"]])
            self.table_rows[path] = rows
            if rows == 0:
                self.problem("{}: the table has no data rows".format(where))
        elif not content.strip():
            self.problem("{}: the file is empty".format(where))

    def check_data_of_unopened_results(self):
        unopened = sorted(set(self.results) - self.opened)
        if not unopened:
            return
        for path in unopened:
            self.problem("{}: the report's UI did not open it".format(path))
        self.driver.set_script_timeout(self.wait_seconds)
        for path, kind, content in self.driver.execute_async_script(DECODE_RESULTS_JS, unopened):
            self.check_data(path, "{} (from its data)".format(path), kind, content)

    def screenshot_first_table(self):
        """A downloaded table has no view in the report; show its result info instead."""
        if self.first_table_row is None or any("04_table" in shot for shot in self.screenshots):
            return
        path, (label, subcategory, choice, index) = self.first_table_row
        if not self.open_listing(label, subcategory):
            return
        self.choose_toggle(choice)
        self.listing_rows()[index].find_element(
            By.CSS_SELECTOR, 'a[iconname="information-circle"]'
        ).click()
        if self.wait(lambda d: d.execute_script("return app.state.navbarMode") == "resultinfo"):
            self.screenshot("04_table_opened_" + slug(self.results[path]["name"]) + "_info")

    def check_console(self):
        for entry in self.driver.get_log("browser"):
            if entry["level"] == "SEVERE":
                self.problem("browser console: {}".format(entry["message"]))
