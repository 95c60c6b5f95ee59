"""`spieltisch verify`: check an export bundle offline, with nothing but this package installed.

The checks, in the order a report names them: the bundle's format; the hash chain; the signature
over the final hash (by the key given with `--key`, else by the one the bundle names); the seed
against its commitment; the generator and rules versions; every command decided again. With
`--seat` and `--version` it then shows what that seat saw at that version. Exit code 0 only when
every check holds, 1 when one does not (the report names the first), 2 for unusable input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from domain.registry import default_registry
from domain.rules import JSON
from domain.table import Tables
from service.audit import Audit, Finding, audit, default_upcasters
from service.bundle import Bundle, BundleError, parse, signed_message
from service.signing import decode_key, key_id, signature_holds

CHECKS = ("format", "chain", "signature", "seed", "versions", "replay")
"""Every check, in the order they are reported: the first failing one is the reason."""
UPCASTERS = default_upcasters()


@dataclass(frozen=True)
class Report:
    """What verifying a bundle found; `findings` in the order of `CHECKS`."""

    findings: tuple[Finding, ...]
    bundle: Bundle | None = None
    audit: Audit | None = None
    key: bytes | None = None
    key_given: bool = False

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def first(self) -> Finding | None:
        return self.findings[0] if self.findings else None

    def text(self) -> str:
        """The report as the command prints it."""
        lines = []
        for check in CHECKS:
            failed = next((f for f in self.findings if f.check == check), None)
            if failed is not None:
                lines.append(f"  {check:<10} FAILED  {failed.detail}")
            elif (done := self._passed(check)) is not None:
                lines.append(f"  {check:<10} ok      {done}")
            else:
                lines.append(f"  {check:<10} not checked")
        if self.bundle is not None and not self.key_given:
            lines.append(
                "note: no --key given, so the signature was checked against the key the bundle "
                "names; compare its id with the service's key (GET /v1/keys)"
            )
        first = self.first
        lines.append(
            "VERIFIED: every check holds"
            if first is None
            else f"NOT VERIFIED: {first.check}: {first.detail}"
        )
        return "\n".join(lines)

    def _passed(self, check: str) -> str | None:
        """What a check that held established, or None if it never ran."""
        bundle, done = self.bundle, self.audit
        if bundle is None or done is None or (check == "replay" and not done.holds("versions")):
            return None
        source = "given with --key" if self.key_given else "named in the bundle"
        return {
            "format": f"a spieltisch-bundle/1 document of {done.events} events",
            "chain": f"every event links to the one before; final hash {bundle.head[:16]}...",
            "signature": f"ed25519 by key {key_id(self.key or b'')} ({source})",
            "seed": "SHA-256 of the revealed seed is the commitment in GameCreated",
            "versions": f"generator {done.chance}, rules version {done.rules_version}",
            "replay": f"all {done.commands} commands decided again give the recorded events",
        }[check]


def verify(document: Any, key: bytes | None = None, tables: Tables | None = None) -> Report:
    """Check a bundle (parsed JSON) and, with `key`, that the service holding `key` signed it."""
    try:
        bundle = parse(document)
    except BundleError as error:
        return Report((Finding("format", str(error)),))
    tables = tables or Tables(default_registry())
    found = audit(tables, bundle.records, UPCASTERS.upcast, bundle.seed)
    findings = list(found.findings)
    public = key or bundle.public_key
    if not signature_holds(public, bundle.signature, signed_message(bundle.head)):
        findings.append(
            Finding(
                "signature",
                f"the signature over the final hash is not by key {key_id(public)} "
                + ("given with --key" if key else "named in the bundle"),
            )
        )
    findings.sort(key=lambda finding: CHECKS.index(finding.check))
    return Report(tuple(findings), bundle, found, public, key is not None)


def seat_view(
    bundle: Bundle, seat: int | None, version: int, tables: Tables | None = None
) -> dict[str, JSON]:
    """What `seat` (None: a spectator) saw of the table at `version`."""
    if not 1 <= version <= len(bundle.records):
        raise ValueError(f"the game has versions 1 to {len(bundle.records)}, not {version}")
    tables = tables or Tables(default_registry())
    events = [UPCASTERS.upcast(record).event for record in bundle.records[:version]]
    table = tables.fold(events)
    assert table is not None
    if seat is not None and not 0 <= seat < len(table.seats):
        raise ValueError(f"the table has seats 0 to {len(table.seats) - 1}, not {seat}")
    return tables.view(table, seat)


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> int:
    parser = argparse.ArgumentParser(
        prog="spieltisch verify",
        description="Verify a finished game's export bundle offline (GET /v1/tables/{id}/export).",
    )
    parser.add_argument("bundle", help="the bundle's file; - reads it from standard input")
    parser.add_argument(
        "--key", help="the service's public key (base64 or hex, GET /v1/keys), or a file of it"
    )
    parser.add_argument("--seat", type=int, help="show what this seat saw (default: a spectator)")
    parser.add_argument("--version", type=int, help="the version to show it at (default: the last)")
    args = parser.parse_args(argv)
    try:
        text = sys.stdin.read() if args.bundle == "-" else Path(args.bundle).read_text("utf-8")
        document = json.loads(text)
        key = None
        if args.key is not None:
            path = Path(args.key)
            key = decode_key(path.read_text() if path.is_file() else args.key)
    except (OSError, ValueError) as error:
        parser.exit(2, f"spieltisch verify: {error}\n")
    except RecursionError:
        parser.exit(2, "spieltisch verify: the bundle's JSON is nested too deep to be a bundle\n")
    report = verify(document, key)
    print(report.text(), file=out)
    if report.bundle is not None and (args.seat is not None or args.version is not None):
        if not report.ok:
            print("No view is shown of a game that does not verify.", file=out)
        else:
            version = args.version or len(report.bundle.records)
            try:
                view = seat_view(report.bundle, args.seat, version)
            except ValueError as error:
                parser.exit(2, f"spieltisch verify: {error}\n")
            who = "a spectator" if args.seat is None else f"seat {args.seat}"
            print(f"\nWhat {who} saw at version {version}:", file=out)
            print(json.dumps(view, indent=2, ensure_ascii=False), file=out)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
