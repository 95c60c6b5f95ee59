"""The package as a user installs and runs it: a wheel that serves everything from package data,
and the `spieltisch` command (README command 1) serving with gunicorn, not Flask's dev server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_wheel_serves_the_contract_the_client_and_the_rule_books(tmp_path: Path) -> None:
    """Built with `pip wheel .` and installed apart from the repository, the service still
    answers `/openapi.yaml`, the web client and every rule book."""
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run([*pip, "wheel", str(ROOT), "--no-deps", "-w", tmp_path / "wheel"], check=True)
    (wheel,) = (tmp_path / "wheel").glob("spieltisch-*.whl")
    site = tmp_path / "site"
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)], check=True)
    script = textwrap.dedent(
        """
        import bootstrap, fakeredis, launcher
        from service.config import Config
        assert bootstrap.__file__.startswith(SITE), bootstrap.__file__
        assert launcher.__file__.startswith(SITE), launcher.__file__  # the command's module
        client = bootstrap.web_app(Config(), redis_client=fakeredis.FakeRedis()).test_client()
        for path in ["/openapi.yaml", "/", "/static/app.js", "/static/games/wobble.js",
                     *(f"/v1/games/{game}/rules" for game in GAMES)]:
            answer = client.get(path, buffered=True)
            assert answer.status_code == 200, (path, answer.status_code)
        print(client.get("/openapi.yaml", buffered=True).get_data(as_text=True), end="")
        """
    )
    games = ["pig10", "krumme10", "krasskariert", "wobble", "rollnbump"]
    prelude = f"SITE = {str(site)!r}\nGAMES = {games!r}\n"
    done = subprocess.run(
        [sys.executable, "-c", prelude + script],
        cwd=tmp_path,  # not the repository: its modules must come from the wheel
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (ROOT / "openapi.yaml").read_text()


def test_the_spieltisch_command_serves_with_gunicorn(spieltisch_command: tuple[str, Path]) -> None:
    base, log = spieltisch_command
    with urllib.request.urlopen(f"{base}/", timeout=5) as page:
        assert page.headers.get_content_type() == "text/html"
    with urllib.request.urlopen(f"{base}/health", timeout=5) as health:
        assert b'"embedded":true' in health.read().replace(b" ", b"")
    text = log.read_text()
    lines = [json.loads(line) for line in text.splitlines()]  # every line, gunicorn's first too
    assert lines[0]["message"].startswith("Starting gunicorn"), lines[0]
    assert any(line["message"].startswith("Booting worker with pid") for line in lines), text
    assert "development server" not in text


def readme_section(title: str) -> str:
    """Every `sh` block of the README's section `title`, in order, as one script."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    return "\n".join(re.findall(r"```sh\n(.*?)```", section, re.DOTALL))


def test_the_curl_walk_through_plays_a_game_as_written(
    spieltisch_command: tuple[str, Path], tmp_path: Path
) -> None:
    """README "Play Pig 10 with curl", run as written against `spieltisch` (only its address
    and the path of the command differ): every value comes from the API's answers."""
    base, _ = spieltisch_command
    script = readme_section("Play Pig 10 with curl")
    assert "S=http://127.0.0.1:8000/v1" in script
    script = script.replace("http://127.0.0.1:8000", base).replace(
        ".venv/bin/spieltisch", str(Path(sys.executable).with_name("spieltisch"))
    )
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert '"status": "finished"' in done.stdout
    assert '"ok": true' in done.stdout, "the audit passed"
    assert done.stdout.rstrip().endswith("VERIFIED: every check holds"), done.stdout[-500:]
