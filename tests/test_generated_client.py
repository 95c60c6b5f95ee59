"""The contract as generators take it: `openapi-python-client` generates every operation of
openapi.yaml with no warning, and the README's bot written against that client plays whole games
against the `spieltisch` command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.test_openapi import HTTP_METHODS, SPEC
from tests.test_package import ROOT, readme_section

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
PACKAGE = "spieltisch_client"


def generate(into: Path) -> subprocess.CompletedProcess[str]:
    """The README's command: the client package `spieltisch_client` in `into`."""
    command = [
        str(GENERATOR),
        "generate",
        "--path",
        str(ROOT / "openapi.yaml"),
        "--meta",
        "none",
        "--output-path",
        PACKAGE,
        "--config",
        str(ROOT / "examples" / "openapi-python-client.yaml"),
    ]
    return subprocess.run(
        command, cwd=into, capture_output=True, text=True, timeout=300, check=False
    )


def snake_case(operation_id: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation_id).lower()


def test_the_generator_takes_every_operation_without_a_warning(tmp_path: Path) -> None:
    done = generate(tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert output.strip() == f"Generating {PACKAGE}", output
    generated = {path.stem for path in (tmp_path / PACKAGE / "api").glob("*/*.py")}
    declared = [
        operation
        for item in SPEC["paths"].values()
        for method, operation in item.items()
        if method in HTTP_METHODS
    ]
    operations = {snake_case(operation["operationId"]) for operation in declared}
    assert len(operations) == len(declared) > 20, "each operation has an id of its own"
    assert operations <= generated, operations - generated


def test_optional_tokens_let_spectators_use_the_plain_client(tmp_path: Path) -> None:
    """Where a token is optional the generated call takes the plain `Client` (a spectator's);
    where the spec requires one, only an `AuthenticatedClient`."""
    assert generate(tmp_path).returncode == 0
    api = tmp_path / PACKAGE / "api"
    for module, spectators in [
        ("tables/get_table", True),
        ("seats/take_seat", True),
        ("events/list_events", True),
        ("games/list_games", True),
        ("moves/make_move", False),
        ("moves/list_legal_moves", False),
    ]:
        source = (api / f"{module}.py").read_text()
        sync = source.split("\ndef sync(", 1)[1]
        assert ("client: AuthenticatedClient | Client," in sync) is spectators, module


def test_the_readme_bot_on_the_generated_client_plays_whole_games(
    spieltisch_command: tuple[str, Path], tmp_path: Path
) -> None:
    """README "A bot on a generated client", run as written (in a copy of the repository's
    layout, so that the generated package lands in the test's directory) against `spieltisch`;
    then the same bot plays Pig 10."""
    base, _ = spieltisch_command
    for name in ["openapi.yaml", "examples"]:
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / ".venv").symlink_to(sys.prefix)  # the virtual environment running the tests
    script = readme_section("A bot on a generated client")
    run = "PYTHONPATH=. .venv/bin/python examples/generated_client_bot.py"
    assert f"{run} --game krasskariert\n" in script
    script = script.replace(run, f"{run} --server {base}")
    script += f"\n{run} --server {base} --game pig10\n"
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path,
        env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    finished = [line for line in done.stdout.splitlines() if " finished: " in line]
    assert [line.split()[0] for line in finished] == ["krasskariert", "pig10"], done.stdout
    assert all("'winners': [" in line for line in finished), finished


def test_the_readme_shows_the_bot_as_it_is() -> None:
    """The README's excerpt of the bot's turn is the example's own code, line by line."""
    section = (
        (ROOT / "README.md")
        .read_text(encoding="utf-8")
        .split("\n## A bot on a generated client\n", 1)[1]
    )
    [excerpt] = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], re.DOTALL)
    bot = {
        line.strip()
        for line in (ROOT / "examples" / "generated_client_bot.py").read_text().splitlines()
    }
    missing = [line for line in excerpt.splitlines() if line.strip() not in bot]
    assert not missing, missing
