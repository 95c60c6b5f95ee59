"""Every command the README shows is run by a test, as written, so that the README cannot rot.

`COMMANDS` names, for each `sh` block of the README (by its first line), the test that runs it;
the few that no test can run say why and what checks them instead. A new block fails
`test_every_readme_command_is_accounted_for` until it is given its test here.

The commands run against the `spieltisch` command on a free port: only the address (and `-n`,
the number of arena games) is replaced.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

import bootstrap
from service.config import Config
from tests.bounds import bounded
from tests.live import call, free_port
from tests.test_package import ROOT, readme_section

CURL_WALK = "tests/test_package.py::test_the_curl_walk_through_plays_a_game_as_written"
COMMANDS = {
    "python3 -m venv .venv && .venv/bin/pip install -e . && ": (
        "test_the_install_command_installs_without_a_warning_and_serves"
    ),
    "(command -v chromium >/dev/null || (apt-get update && ": (
        "not run by a test: it runs every test. .ci/run runs it (its `.venv/bin/pytest` line), "
        "and test_the_development_test_selections_select_what_they_say checks its variants"
    ),
    "S=http://127.0.0.1:8000/v1\n": f"{CURL_WALK}",
    "SEAT=$(curl -s $S/tables/$T": f"{CURL_WALK}",
    'while [ "$(curl -s $S/tables/$T': f"{CURL_WALK}",
    "curl -s $S/bots": "test_the_bot_stream_and_clock_commands_answer",
    "curl -N $S/tables/$T/stream": "test_the_bot_stream_and_clock_commands_answer",
    ".venv/bin/pip install openapi-python-client": (
        "tests/test_generated_client.py::"
        "test_the_readme_bot_on_the_generated_client_plays_whole_games"
    ),
    "curl -s $S/tables -H 'Content-Type: application/json'": (
        "test_the_bot_stream_and_clock_commands_answer"
    ),
    ".venv/bin/pip install -e '.[arena]'": (
        "test_the_arena_commands_play (the install line is the [test] extra's, which holds "
        "[arena]: the tests run in that environment)"
    ),
    "python3 -m venv .venv && .venv/bin/pip install -e .\n": (
        "test_the_install_command_installs_without_a_warning_and_serves"
    ),
    "S=http://127.0.0.1:8000/v1 T=<table id>": "test_the_verify_commands_verify_a_game",
    ".venv/bin/spieltisch verify game.json --key spieltisch.pub\n": (
        "test_the_verify_commands_verify_a_game"
    ),
    ".venv/bin/spieltisch verify game.json --key spieltisch.pub --seat": (
        "test_the_verify_commands_verify_a_game"
    ),
    "export REDIS_URL=": (
        "not run by a test: honcho is not a dependency of the project. The Procfile's lines it "
        "starts are what tests/stack.py runs for the e2e tests; the key one-liner is run by "
        "test_the_signing_key_one_liner_makes_a_key_the_service_takes"
    ),
    ".venv/bin/ruff check . && ": (
        "not run by a test: it runs every test. .ci/run runs each of its commands"
    ),
    ".venv/bin/pytest -m unit": "test_the_development_test_selections_select_what_they_say",
}
"""How each `sh` block of the README begins (each block is dedented, so one ending in `\\n` is its
whole first line), and the test that runs it, or why none does."""

ENVIRONMENT = {
    key: value for key, value in os.environ.items() if key not in {"REDIS_URL", "PYTHONPATH"}
}


def sh_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [textwrap.dedent(block) for block in re.findall(r"```sh\n(.*?)```", text, re.DOTALL)]


def run(
    command: list[str], cwd: Path, env: dict[str, str] = ENVIRONMENT, timeout: int = 300
) -> subprocess.CompletedProcess[str]:
    """`command`, run to its end, after asserting it succeeded."""
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def bash(script: str, cwd: Path, env: dict[str, str] = ENVIRONMENT, timeout: int = 300) -> str:
    """Run `script` as the README's reader would; its output."""
    return run(["bash", "-euo", "pipefail", "-c", script], cwd, env, timeout).stdout


def venv_in(directory: Path) -> None:
    """`.venv` in `directory`: the environment the tests run in, as the README's `.venv`."""
    (directory / ".venv").symlink_to(sys.prefix)


def test_every_readme_command_is_accounted_for() -> None:
    blocks = sh_blocks()
    for block in blocks:
        starts = [start for start in COMMANDS if block.startswith(start)]
        assert len(starts) == 1, f"{starts}: {block[:200]}"
    assert all(any(block.startswith(start) for block in blocks) for start in COMMANDS)
    own = {name for name in globals() if name.startswith("test_")}
    for where in COMMANDS.values():
        named = where.split(" ", 1)[0]
        if "::" not in named and not where.startswith("not run"):
            assert named in own, where


def with_server(script: str, base: str) -> str:
    return script.replace("http://127.0.0.1:8000", base)


@pytest.mark.e2e
def test_the_install_command_installs_without_a_warning_and_serves(tmp_path: Path) -> None:
    """README "Run it" in a fresh copy of the repository: a new virtual environment, the editable
    install (no warning, no setuptools notice), and `spieltisch` answering, without a warning of
    its own (gevent's about patching `ssl` after it was imported, once, at every start)."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, files.split("\0")):
        source, target = ROOT / name, tmp_path / name
        if source.is_symlink() or source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(os.readlink(source)) if source.is_symlink() else target.write_bytes(
                source.read_bytes()
            )
    [command] = [block for block in sh_blocks() if "pip install -e . &&" in block]
    install, serve = command.strip().rsplit(" && ", 1)
    assert serve == ".venv/bin/spieltisch"
    env = {**ENVIRONMENT, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    done = run(["bash", "-euo", "pipefail", "-c", install + " --verbose"], tmp_path, env, 600)
    said = [
        line
        for line in (done.stdout + done.stderr).splitlines()
        # This machine's pip configuration names an index folder that is missing for some
        # packages; pip says so for each, whatever is installed.
        if re.search(r"warn|notice|InformationOnly|^\s*!!\s*$", line, re.IGNORECASE)
        and not re.match(r"WARNING: Location 'file:///\S+' is ignored", line)
    ]
    assert not said, "\n".join(said)
    port, log = free_port(), tmp_path / "spieltisch.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [str(tmp_path / serve), "--port", str(port)],
            cwd=tmp_path,
            env=ENVIRONMENT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        for _ in bounded("spieltisch to answer", 300):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as up:
                    assert json.load(up)["status"] == "ok"
                break
            except OSError:
                assert server.poll() is None, "spieltisch ended"
                time.sleep(0.1)
    finally:
        server.terminate()
        server.wait(timeout=15)
    started = log.read_text()
    assert "Booting worker" in started, started
    assert not re.search(r"warn", started, re.IGNORECASE), started


def test_the_bot_stream_and_clock_commands_answer(
    spieltisch_command: tuple[str, Path], tmp_path: Path
) -> None:
    base, _ = spieltisch_command
    prelude = f"S={base}/v1\nJ='Content-Type: application/json'\n"
    bots = readme_section("Bots and live streams").split("curl -N", 1)[0]
    output = bash(prelude + bots + 'echo "table=$T token=$A"\n', tmp_path)
    catalogue = [json.loads(line) for line in output.splitlines() if line.startswith('{"name"')]
    assert {"random", "heuristic", "search"} <= {bot["name"] for bot in catalogue}
    table, token = re.findall(r"table=(\S+) token=(\S+)", output)[-1]
    status, seats = call(base, "GET", f"/v1/tables/{table}/seats")
    assert status == 200
    assert [seat["bot"] for seat in seats] == [None, "search", "heuristic", "random"], output
    # The live stream never ends on its own: read its first events, then hang up.
    [stream] = [block for block in sh_blocks() if block.startswith("curl -N")]
    with subprocess.Popen(
        ["bash", "-c", prelude + f"T={table}\nA={token}\n" + stream],
        env=ENVIRONMENT,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # so that hanging up ends curl too, not only its shell
    ) as follow:
        assert follow.stdout is not None
        lines = [follow.stdout.readline() for _ in range(5)]
        os.killpg(follow.pid, signal.SIGTERM)
    assert lines[2:4] == ["id: 1\n", "event: table.GameCreated\n"], lines
    clocks = readme_section("Clocks")
    created = json.loads(bash(prelude + clocks, tmp_path))
    assert created["clock"]["turn_seconds"] == 60
    assert created["clock"]["timeouts"] == 3


def finished_table(base: str) -> str:
    """A Pig 10 table of two built-in bots, played to its end by the service's workers."""
    body = {"game": "pig10", "seats": 2, "bots": [{"seat": 0, "bot": "random"}]}
    status, table = call(base, "POST", "/v1/tables", body)
    assert status == 201, table
    status, _ = call(base, "POST", f"/v1/tables/{table['id']}/seats", {"bot": "heuristic"})
    assert status == 201
    for _ in bounded("the bots to finish", 600):
        status, view = call(base, "GET", f"/v1/tables/{table['id']}")
        if view["status"] == "finished":
            return str(table["id"])
        time.sleep(0.1)
    raise AssertionError("unreachable: bounded() fails first")


def test_the_verify_commands_verify_a_game(
    spieltisch_command: tuple[str, Path], tmp_path: Path
) -> None:
    base, _ = spieltisch_command
    table = finished_table(base)
    venv_in(tmp_path)
    blocks = [
        block
        for block in sh_blocks()
        if block.startswith(("S=http://127.0.0.1:8000/v1 T=", ".venv/bin/spieltisch"))
    ]
    assert len(blocks) == 3
    fetch, verify, partly = (with_server(block, base) for block in blocks)
    bash(fetch.replace("<table id>", table), tmp_path)
    assert bash(verify, tmp_path).rstrip().endswith("VERIFIED: every check holds")
    assert "VERIFIED" in bash(partly, tmp_path)


def test_the_arena_commands_play(spieltisch_command: tuple[str, Path], tmp_path: Path) -> None:
    base, _ = spieltisch_command
    venv_in(tmp_path)
    block = readme_section("How the search bot thinks, and how strong the bots are")
    lines = [line for line in block.splitlines() if line.startswith(".venv/bin/python -m arena")]
    assert len(lines) == 3
    script = with_server(re.sub(r" -n \d+", " -n 1", "\n".join(lines)), base)
    if " -n " not in lines[-1]:
        script += " -n 1"  # the last line plays the default 100 games on the service
    output = bash(script, tmp_path, timeout=600)
    assert (tmp_path / "games.csv").read_text().count("\n") == 2, "a header and a game"
    assert (tmp_path / "ratings.png").read_bytes().startswith(b"\x89PNG")
    assert len((tmp_path / "wobble.jsonl").read_text().splitlines()) == 1, "the game kept"
    assert output.count("search") >= 3, output


def test_the_signing_key_one_liner_makes_a_key_the_service_takes(tmp_path: Path) -> None:
    block = readme_section("Running against a real Redis")
    [line] = [line for line in block.splitlines() if "SPIELTISCH_SIGNING_KEY=" in line]
    key = bash(line.split("  #", 1)[0] + '\necho "$SPIELTISCH_SIGNING_KEY"', tmp_path).strip()
    # The service's own reading of the setting: a 32-byte key, or a ValueError.
    signer = bootstrap.signer_for(Config.from_env({"SPIELTISCH_SIGNING_KEY": key}))
    assert signer.public_json() != bootstrap.signer_for(Config()).public_json(), "not a fresh one"


def test_the_development_test_selections_select_what_they_say() -> None:
    """`pytest -m unit` ("about 1,400 tests") as README Development shows it, collected (not
    run: it holds this test); `-m "not e2e"` is the same kind of selection."""
    block = readme_section("Development")
    assert ".venv/bin/pytest -m unit " in block
    assert '.venv/bin/pytest -m "not e2e" ' in block
    collect = ["--collect-only", "-q", "-p", "no:randomly", "-m", "unit"]
    done = run([sys.executable, "-m", "pytest", *collect], ROOT)
    counted = re.search(r"^(\d+)/\d+ tests collected", done.stdout, re.MULTILINE)
    assert counted, done.stdout[-500:]
    assert 1000 <= int(counted.group(1)) <= 1800, counted.group(0)
