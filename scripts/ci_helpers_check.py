#!/usr/bin/env python3
"""Checks a test runner's JUnit report of sse-replay's suite (pytest, vitest) against
`sse-replay test --json` on the same cases, and that named failures are there.

    ci_helpers_check.py REPORT.xml [--same-as TEST.json] [--passes PREFIX]... [--fails CASE=TEXT]...

- every case in both reports has the same outcome (pass = passed, fail/error = failed,
  not-judged = skipped);
- every case whose id starts with a --passes PREFIX passed;
- each --fails CASE failed with TEXT in its message.
Standard library only. Exit 1 with one line per problem.
"""

import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

CASE_ID = re.compile(r"([A-Za-z0-9._-]+/[a-z0-9-]+)\]?$")


def junit_outcomes(path):
    """case id -> (outcome, message) from a JUnit XML report."""
    out = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        m = CASE_ID.search(tc.get("name", ""))
        if not m:
            continue
        outcome, message = "passed", ""
        for child in tc:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                message = (child.get("message") or "") + "\n" + (child.text or "")
            elif child.tag == "skipped":
                outcome = "skipped"
                message = child.get("message") or child.text or ""
        out[m.group(1)] = (outcome, message)
    return out


def cli_outcomes(path):
    """case id -> outcome from `sse-replay test --json`."""
    names = {"pass": "passed", "fail": "failed", "error": "failed", "not-judged": "skipped"}
    doc = json.load(open(path, encoding="utf-8"))
    out = {}
    for c in doc["cases"]:
        stem = os.path.splitext(os.path.basename(c["recording"]))[0]
        out[f"{stem}/{c['variant']}"] = names[c["verdict"]]
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("report")
    p.add_argument("--same-as")
    p.add_argument("--passes", action="append", default=[])
    p.add_argument("--fails", action="append", default=[])
    a = p.parse_args()
    got = junit_outcomes(a.report)
    problems = []
    if not got:
        problems.append(f"{a.report}: no suite case in the report")
    if a.same_as:
        cli = cli_outcomes(a.same_as)
        both = sorted(set(cli) & set(got))
        if len(both) < len(cli):
            problems.append(f"{len(cli) - len(both)} case(s) of {a.same_as} missing from {a.report}: {sorted(set(cli) - set(got))[:5]}")
        for case in both:
            if cli[case] != got[case][0]:
                problems.append(f"{case}: sse-replay test says {cli[case]}, the test runner {got[case][0]}")
        print(f"{a.report}: {len(both)} cases compared with {a.same_as}")
    for prefix in a.passes:
        mine = [c for c in got if c.startswith(prefix)]
        if not mine:
            problems.append(f"no case {prefix}* in the report")
        problems += [f"{c}: expected to pass, {got[c][0]}: {got[c][1].strip()[:300]}" for c in mine if got[c][0] != "passed"]
    for spec in a.fails:
        case, _, text = spec.partition("=")
        outcome, message = got.get(case, ("missing", ""))
        if outcome != "failed" or text not in message:
            problems.append(f"{case}: expected a failure saying {text!r}, got {outcome}: {message.strip()[:300]}")
    counts = {}
    for outcome, _ in got.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    print(f"{a.report}: {len(got)} cases: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    for line in problems:
        print(f"problem: {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
