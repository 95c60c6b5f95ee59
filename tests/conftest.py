"""Shared fixtures: a fakeredis for fast tests, a real Redis server for the integration tests,
the service running on it as the Procfile runs it (`stack`), and Chromium pages on that (`page`).

The real server is `SPIELTISCH_TEST_REDIS_URL` (default: database 13 of 127.0.0.1:6379; under
`pytest -n`, one database per test process: tests/live.py). Tests flush only their database.
When no server answers, or no Chromium is installed, the tests that need one fail loudly: they
never skip, so a CI run without them cannot pass by testing less.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import fakeredis
import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from playwright.sync_api import Browser, Page, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from bench.cluster import Cluster
from bootstrap import EMBEDDED_WORKER, web_app
from events.connect import connect
from service.config import Config
from tests.browser import DESKTOP, PHONE, NoChromium, Watched, launch
from tests.live import TEST_REDIS_URL, free_port
from tests.stack import Stack

END_TO_END = {
    *("stack", "browser", "pages", "page", "phone_page", "server", "spieltisch_command"),
    "procfile",
}
"""Fixtures that run the Procfile's processes or a browser."""
STARTUP_SECONDS = 30
"""How long the `spieltisch` command may take to answer."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Sort every test into the pyramid by what it uses: `-m unit` runs everything that needs
    neither a Redis server nor a browser."""
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if (
            used & END_TO_END
            or item.get_closest_marker("e2e")  # runs a process of its own
            or item.get_closest_marker("browser")
            or item.get_closest_marker("fault")
        ):
            item.add_marker(pytest.mark.e2e)
        elif (
            "real_redis" in used
            or item.get_closest_marker("redis")
            or item.get_closest_marker("cluster")
        ):
            item.add_marker(pytest.mark.integration)
        else:
            item.add_marker(pytest.mark.unit)


@pytest.fixture
def fake_redis() -> Iterator[redis.Redis]:
    client = fakeredis.FakeRedis()
    yield client
    client.flushall()


@pytest.fixture
def real_redis() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(TEST_REDIS_URL)
    try:
        client.ping()
    except redis.ConnectionError as error:
        pytest.fail(f"no Redis server at {TEST_REDIS_URL} ({error}); start one: see README")
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture(params=["fakeredis", pytest.param("redis", marks=pytest.mark.redis)])
def any_redis(request: pytest.FixtureRequest) -> redis.Redis:
    """Each test using this runs twice: on fakeredis and on the real server."""
    return redis_named(request)


def redis_named(request: pytest.FixtureRequest) -> redis.Redis:
    """The client of the fixture the request's param names: `fakeredis`, `redis` or `cluster`."""
    fixture = {"fakeredis": "fake_redis", "redis": "real_redis", "cluster": "cluster_redis"}
    client: redis.Redis = request.getfixturevalue(fixture[request.param])
    return client


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A Redis Cluster of the session's own (tests/cluster.py), three masters with a replica
    each. It is never made to fail over (tests that kill a node start a cluster of their own);
    when it cannot start, the tests needing it fail."""
    with Cluster(tmp_path_factory.mktemp("cluster")) as cluster:
        yield cluster


@pytest.fixture
def cluster_redis(redis_cluster: Cluster) -> Iterator[redis.Redis]:
    """A client of the session's cluster, emptied before and after (it is the tests' own)."""
    client = connect(redis_cluster.url)
    client.flushall()
    yield client
    client.flushall()
    client.close()


IN_PROCESS = Config(rate_limits=False)
"""The settings of the tests' in-process apps: the shipped ones without rate limits, since these
tests play far faster than any client (tests/test_limits.py and the contract walk test those)."""


@pytest.fixture
def app(fake_redis: redis.Redis) -> Flask:
    """The web app on a fakeredis, without a worker; a test module may override it."""
    return web_app(IN_PROCESS, redis_client=fake_redis)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def embedded() -> Iterator[Callable[[Config], Flask]]:
    """Builds embedded apps (no Redis: a fakeredis and a bot worker thread of their own) and
    stops their worker and scheduler threads after the test, so that none of them goes on
    working, and asking Redis, during the tests after it."""
    built: list[Flask] = []

    def build(config: Config) -> Flask:
        app = web_app(config)
        built.append(app)
        return app

    yield build
    for app in built:
        worker = app.extensions.get(EMBEDDED_WORKER)
        assert worker is None or worker.stop(), "an embedded worker's threads did not stop"


@pytest.fixture
def stack(
    real_redis: redis.Redis, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Stack]:
    """The web server and bot workers as the Procfile runs them, logging into `tmp_path`: one
    worker, or as many as `@pytest.mark.parametrize("stack", [n], indirect=True)` asks for;
    `@pytest.mark.stack_env(NAME="value")` sets the processes' environment variables."""
    workers: int = getattr(request, "param", 1)
    marker = request.node.get_closest_marker("stack_env")
    running = Stack(tmp_path, settings=marker.kwargs if marker else None)
    try:
        for _ in range(workers):
            running.start_worker()
        running.wait_until_serving()
        yield running
    finally:
        running.stop()


# ---- browser tests ----------------------------------------------------------------------------

CALL_REPORT = pytest.StashKey[pytest.TestReport]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keeps how each test's body went, for fixtures that say more when it failed."""
    report = yield
    if report.when == "call":
        item.stash[CALL_REPORT] = report
    return report


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless; a test needing it fails, never skips, when it is missing."""
    with sync_playwright() as playwright:
        try:
            running = launch(playwright)
        except NoChromium as error:
            pytest.fail(str(error), pytrace=False)
        yield running
        running.close()


@pytest.fixture
def pages(
    browser: Browser, stack: Stack, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Watched]:
    """Opens pages on the stack (`page.goto("/")`), each in a context of its own. The test fails
    if any page threw, logged a console error or got a 5xx answer; when it fails, a screenshot
    of each page is saved and its path printed."""
    watched = Watched(browser, stack.base)
    try:
        yield watched
        problems = watched.settle()
        report = request.node.stash.get(CALL_REPORT, None)
        if (report is not None and report.failed) or problems:
            for number, page in enumerate(watched.pages):
                shot = tmp_path / f"page-{number}.png"
                try:
                    page.screenshot(path=shot, full_page=True)
                    print(f"screenshot of page {number} ({page.url}): {shot}")
                except PlaywrightError as error:
                    print(f"no screenshot of page {number}: {error.message}")
    finally:
        watched.close()
    if problems:
        pytest.fail("the browser saw problems:\n" + "\n".join(problems))


@pytest.fixture
def page(pages: Watched) -> Page:
    """A desktop-sized page (1280x900) on the stack."""
    return pages.open(DESKTOP)


@pytest.fixture
def phone_page(pages: Watched) -> Page:
    """A phone-sized page (390x844) on the stack."""
    return pages.open(PHONE)


@pytest.fixture
def spieltisch_command(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """`spieltisch --port N` as README command 1 runs it (embedded), logging into a file."""
    port, log = free_port(), tmp_path / "spieltisch.log"
    command = [str(Path(sys.executable).with_name("spieltisch")), "--port", str(port)]
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(STARTUP_SECONDS * 10):
            try:
                urllib.request.urlopen(f"{base}/health", timeout=1).close()
                break
            except OSError:
                assert process.poll() is None, log.read_text()
                time.sleep(0.1)
        else:
            pytest.fail(f"spieltisch did not answer in {STARTUP_SECONDS} s:\n{log.read_text()}")
        yield base, log
    finally:
        process.terminate()
        process.wait(timeout=60)  # a busy embedded worker may finish its turn first
