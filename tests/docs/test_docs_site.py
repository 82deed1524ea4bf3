"""The documentation site as a reader meets it: built by ``mkdocs build --strict``, served over
HTTP on 127.0.0.1, and opened in Debian's headless ``chromium`` (driven by playwright, which
downloads no browser of its own; ``.ci/run`` installs chromium). A page that does not render, a
plot that does not load, an internal link that answers 404 or a missing search index fails here.
The home page's screenshot is kept in the test's temporary folder (``home.png``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from functools import partial
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
import yaml

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
# one page of each kind, as URLs under the site root (use_directory_urls)
HOME, GUIDE_PAGE, API_PAGE = "", "guide/configs/", "api/"
NAV_SECTIONS = ("Getting started", "Tutorials", "User guide", "Benchmarks", "Reference")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built strictly into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir"]
    done = subprocess.run(
        [*command, str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}{done.stderr}"
    return out


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves the site without a log line per request."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    """The site served on 127.0.0.1 (a free port) from a thread; its root URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian chromium."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        try:
            yield chromium
        finally:
            chromium.close()


def tutorial_pages(site: Path) -> list[str]:
    """The rendered notebooks (``tutorials/<name>/``), in the order of their names."""
    pages = sorted(p.parent for p in (site / "tutorials").glob("*/index.html"))
    return [f"tutorials/{page.name}/" for page in pages]


def open_page(browser: Any, url: str) -> Any:
    """A new page with ``url`` loaded (images included); fails on an HTTP error."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    response = page.goto(url, wait_until="load")
    assert response is not None and response.ok, f"{url}: HTTP {response and response.status}"
    return page


def assert_rendered_with_navigation(page: Any, url: str) -> None:
    """A heading, body text, and the site's navigation with every section of the site."""
    assert page.locator("h1").first.inner_text().strip(), f"{url}: no heading"
    assert len(page.locator("article").inner_text()) > 50, f"{url}: (almost) no text"
    navigation = page.locator("nav.md-nav--primary").first.inner_text()
    missing = [name for name in NAV_SECTIONS if name not in navigation]
    assert not missing, f"{url}: the navigation lacks {missing}"
    assert page.locator("nav.md-nav--primary a[href]").count() > 40, f"{url}: navigation links"


def test_home_guide_tutorial_and_api_pages_render_with_their_navigation(
    site: Path, server: str, browser: Any, tmp_path: Path
) -> None:
    """Home, a user-guide page, the first tutorial and the API reference render in Chromium,
    each with the site's navigation; the home page's screenshot is saved as home.png."""
    tutorials = tutorial_pages(site)
    assert tutorials, "no rendered tutorial notebook under tutorials/"
    for path in (HOME, GUIDE_PAGE, tutorials[0], API_PAGE):
        page = open_page(browser, server + path)
        assert_rendered_with_navigation(page, path or "home")
        if path == HOME:
            screenshot = tmp_path / "home.png"
            page.screenshot(path=str(screenshot), full_page=True)
            assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert "neuro_evolution" in page.title()
        if path == API_PAGE:  # rendered from the docstrings, not written by hand
            heading = page.locator("[id='neuro_evolution.Experiment']")
            assert heading.count() == 1, "the API page has no neuro_evolution.Experiment entry"
            assert "step" in page.locator("article").inner_text()
        page.close()


def test_a_tutorials_plot_image_loads(site: Path, server: str, browser: Any) -> None:
    """The first tutorial page that shows an image: every image on it has loaded and has a
    width (a saved notebook output, not a broken link). No tutorial with an image fails."""
    for path in tutorial_pages(site):
        page = open_page(browser, server + path)
        images = page.locator("article img")
        if images.count():
            widths = images.evaluate_all("els => els.map(e => e.complete ? e.naturalWidth : 0)")
            assert all(width > 0 for width in widths), f"{path}: image widths {widths}"
            return
        page.close()
    pytest.fail("no tutorial page shows an image (a notebook saved without its plot outputs?)")


class Links(HTMLParser):
    """The ``href`` and ``src`` values of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.found.append(value)


def internal_links(site: Path, server: str) -> dict[str, str]:
    """Every internal link target of every page (absolute URL, fragment dropped) -> a page
    that links to it."""
    targets: dict[str, str] = {}
    host = urlsplit(server).netloc
    for html in sorted(site.rglob("*.html")):
        page_url = server + html.relative_to(site).as_posix()
        parser = Links()
        parser.feed(html.read_text(encoding="utf-8"))
        for link in parser.found:
            url = urljoin(page_url, link).split("#", 1)[0]
            if urlsplit(url).netloc == host and urlsplit(url).scheme == "http":
                targets.setdefault(url, page_url)
    return targets


def status(url: str) -> int:
    """The HTTP status the server answers for ``url``."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_no_internal_link_answers_404(site: Path, server: str) -> None:
    """Every href and src of every built page that points into the site is served."""
    targets = internal_links(site, server)
    assert len(targets) > 100, f"only {len(targets)} internal links found"
    broken = {url: page for url, page in targets.items() if status(url) == 404}
    assert not broken, f"internal links that answer 404 (target: linked from): {broken}"


def test_a_broken_link_is_found(tmp_path: Path, server: str) -> None:
    """The crawl sees a link to a page that does not exist."""
    (tmp_path / "page.html").write_text('<a href="nowhere/">x</a><img src="../assets/none.png">')
    targets = internal_links(tmp_path, server)
    assert set(targets) == {server + "nowhere/", server + "assets/none.png"}
    assert all(status(url) == 404 for url in targets)


def test_the_search_index_exists_and_holds_the_pages(server: str) -> None:
    """search/search_index.json is served and indexes the user guide's text."""
    with urllib.request.urlopen(server + "search/search_index.json", timeout=30) as response:
        index = json.load(response)
    locations = {entry["location"].split("#", 1)[0] for entry in index["docs"]}
    assert {"", GUIDE_PAGE, API_PAGE} <= locations
    text = " ".join(entry["text"] for entry in index["docs"] if entry["location"] == GUIDE_PAGE)
    assert "held-out" in text


def nav_titles(entries: list) -> list[str]:
    """The page titles that mkdocs.yml's ``nav`` gives, depth first; sections, and a section's
    ``index.md`` (shown as its section, navigation.indexes), left out."""
    titles: list[str] = []
    for entry in entries:
        if isinstance(entry, dict):
            for title, value in entry.items():
                if isinstance(value, list):
                    titles += nav_titles(value)
                elif not value.endswith("/index.md"):
                    titles.append(title)
    return titles


def test_the_navigation_shows_every_page_under_its_whole_nav_title(site: Path) -> None:
    """Every page title of mkdocs.yml's nav is a link text of the built navigation, whole (a
    notebook's own heading, cut at a code span, does not replace it)."""
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    html = (site / "index.html").read_text()
    shown = {text.strip() for text in re.findall(r'<span class="md-ellipsis">([^<]*)</span>', html)}
    missing = [title for title in nav_titles(nav) if title not in shown]
    assert not missing, f"the navigation lacks {missing}"
