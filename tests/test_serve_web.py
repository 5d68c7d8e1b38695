"""giok serve: the web page in a real headless browser (Debian's chromium driven by
Playwright): sign in from the #token= URL, see entries with their layer and expiry, search,
remember → it appears, forget with a reason and a confirmation → it is gone, mark a task done."""

from __future__ import annotations

import datetime as dt
import os
import shutil

import pytest

from serve_support import serve_fixture

CHROMIUM = os.environ.get("GIOK_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("no chromium (apt-get install -y chromium) for the browser test", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


srv = serve_fixture("serve-web")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, srv):
    context = browser.new_context()
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    pg.goto(f"{srv.url}/#token={srv.tokens['zeon-owner']}")  # as `giok web` makes: an owner's
    pg.locator("section.layer").first.wait_for()
    yield pg
    context.close()


def row(page, text):
    return page.locator("tr", has_text=text)


def test_sign_in_from_the_url_shows_entries_with_layer_and_expiry(page):
    assert "token=" not in page.url  # the fragment is dropped from the address bar
    coffee = row(page, "dark roast coffee")
    assert coffee.locator("xpath=ancestor::section[@data-layer]").get_attribute("data-layer") == "M90"
    assert coffee.locator(".expiry").inner_text() == "in 90 days"
    assert coffee.locator(".age").inner_text() == "0 days old"
    korean = row(page, "서준은 매주 금요일에 배포한다")
    assert korean.locator("xpath=ancestor::section[@data-layer]").get_attribute("data-layer") == "M365"
    assert page.locator("#ws-title").inner_text() == "zeon"
    assert [b.inner_text() for b in page.locator("nav button").all()] == ["zeon"]


def test_search_shows_scored_results(page):
    page.click("#tabs button[data-tab=search]")
    page.fill("#search-q", "금요일 배포")
    page.click("#search-form button[type=submit]")
    first = page.locator("#search-results li").first
    first.wait_for()
    assert "금요일" in first.inner_text()
    assert float(first.locator(".score").inner_text()) > 0
    assert "noise floor" in page.locator("#search-cut").inner_text()


def test_remember_appears_and_forget_with_confirm_removes_it(page, srv):
    page.fill("#remember-text", "The design review happens on Wednesdays")
    page.select_option("#remember-layer", "M90")
    page.click("#remember-form button[type=submit]")
    entry = row(page, "design review happens on Wednesdays")
    entry.wait_for()
    assert entry.locator("xpath=ancestor::section[@data-layer]").get_attribute("data-layer") == "M90"
    assert "design review" in srv.workspaces["zeon"].path("MEMORY.md").read_text()

    entry.locator("button.forget").click()  # cancel first: nothing happens
    page.locator("#forget-dialog").wait_for()
    page.click("#forget-dialog button[value=cancel]")
    assert entry.count() == 1

    entry.locator("button.forget").click()
    page.fill("#forget-reason", "a test entry")
    page.click("#forget-confirm")
    entry.wait_for(state="detached")
    assert "design review" not in srv.workspaces["zeon"].path("MEMORY.md").read_text()


def test_mark_a_task_done_and_the_other_tabs(page):
    page.click("#tabs button[data-tab=work]")
    task = page.locator("#tasks li", has_text="Write the release notes")
    task.locator("button.done").click()
    page.locator("#tasks li", has_text="[done]").wait_for()
    assert task.locator("button.done").count() == 0
    page.click("#tabs button[data-tab=boot]")
    page.fill("#boot-budget", "300")
    page.click("#boot-form button[type=submit]")
    page.locator("#boot-left li", has_text="M30").wait_for()
    assert "of 300 tokens" in page.locator("#boot-used").inner_text()
    page.click("#tabs button[data-tab=timeline]")
    page.locator("#diff span.add").first.wait_for()
    assert page.locator("#commits li").count() >= 3


def test_review_tab_resolves_an_item(page, srv):
    from giok.lifecycle.distill import distill

    zeon = srv.workspaces["zeon"]
    zeon.remember("The weekly demo is recorded")
    zeon.remember("The weekly demo is not recorded")
    distill(zeon)
    page.click("#tabs button[data-tab=review]")
    item = page.locator("#review li[data-item]", has_text="weekly demo")
    item.wait_for()
    item.locator("button.resolve[data-choice=both]").click()
    page.locator("#review li.muted", has_text="nothing to review").wait_for()
    assert "(resolved)" in zeon.path("state/review.md").read_text()


def test_a_wrong_token_shows_the_sign_in_form(browser, srv):
    context = browser.new_context()
    pg = context.new_page()
    pg.goto(f"{srv.url}/#token=giok_0000_wrong")
    pg.locator("#login-error").wait_for()
    pg.wait_for_function("document.getElementById('login-error').textContent.length > 0")
    assert "invalid" in pg.locator("#login-error").inner_text()
    assert pg.locator("#app").is_hidden()
    pg.fill("#token-input", srv.tokens["zeon-read"])
    pg.click("#login-form button[type=submit]")
    pg.locator("section.layer").first.wait_for()
    assert pg.locator("#remember-form").is_hidden()  # a read token: no write controls
    assert pg.locator("button.forget").count() == 0
    assert pg.locator('#tabs button[data-tab="timeline"]').is_hidden()  # the history: owner tokens only
    assert pg.locator('#tabs button[data-tab="review"]').is_hidden()
    context.close()


def test_the_date_control_shows_the_past(page):
    page.fill("#at", "2000-01-01")  # before the first commit: one clear error, the page stays
    page.locator("#status", has_text="no history before").wait_for()
    page.fill("#at", dt.date.today().isoformat())
    page.locator("#ws-title", has_text="as of").wait_for()
    assert page.locator("#remember-form").is_hidden()  # the past is read-only
    assert row(page, "dark roast coffee").count() == 1
