#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Validate a Chrome trace written by `edgert profile --trace` or `edgert trace`.

    check-trace.py TRACE --ops N [--runs R] [--npu [--signal]]

Checks (docs/tracing.md describes the events):
  - the file parses as JSON with a traceEvents list;
  - timestamps never go back in file order, and no span has a negative duration;
  - on every track, spans nest (none overlaps another only in part);
  - there are R spans of category "run" (any number >= 1 without --runs), each
    holding exactly N spans of category "op" on its track, whose args.index
    are 0..N-1 once each;
  - --npu: at least one NPU job; every job has a submit instant, an engine
    span and a signal instant (when any signal was traced; --signal: always), in the order
    submit <= engine start <= engine end <= signal; the submit and the engine
    span lie inside the span of one op on the submitting thread's track, the
    op whose backend is "npu"; every flow start has its finish.
Prints "ok: ..." and exits 0, or one "error: ..." line per problem and exits 1.
"""
import argparse
import decimal
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--ops", type=int, required=True)
    ap.add_argument("--runs", type=int)
    ap.add_argument("--npu", action="store_true")
    ap.add_argument("--signal", action="store_true")
    a = ap.parse_args()
    errors = []

    try:
        with open(a.trace, encoding="utf-8") as f:
            doc = json.load(f, parse_float=decimal.Decimal)
        events = doc["traceEvents"]
        assert isinstance(events, list)
    except (OSError, ValueError, KeyError, AssertionError, TypeError) as e:
        print(f"error: {a.trace} is not a Chrome trace: {e}")
        return 1

    last = None
    for i, e in enumerate(events):
        if "ts" not in e:
            continue
        ts = decimal.Decimal(e["ts"])
        if last is not None and ts < last:
            errors.append(f"event {i} ({e.get('name')}) at {ts} us comes after one at {last} us")
        last = ts
        if e.get("ph") == "X" and decimal.Decimal(e.get("dur", -1)) < 0:
            errors.append(f"span {i} ({e.get('name')}) has no or a negative duration")

    spans = [e for e in events if e.get("ph") == "X"]
    for e in spans:
        e["_t0"] = decimal.Decimal(e["ts"])
        e["_t1"] = e["_t0"] + decimal.Decimal(e["dur"])
    tracks = {}
    for e in spans:
        tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    for key, lst in tracks.items():
        stack = []
        for e in sorted(lst, key=lambda s: (s["_t0"], -s["_t1"])):
            while stack and stack[-1]["_t1"] <= e["_t0"]:
                stack.pop()
            if stack and e["_t1"] > stack[-1]["_t1"]:
                p = stack[-1]
                errors.append(f"track {key}: {e['cat']} '{e['name']}' [{e['_t0']}, {e['_t1']}] "
                              f"overlaps {p['cat']} '{p['name']}' [{p['_t0']}, {p['_t1']}] in part")
            stack.append(e)

    runs = [e for e in spans if e.get("cat") == "run"]
    ops = [e for e in spans if e.get("cat") == "op"]
    if a.runs is not None and len(runs) != a.runs:
        errors.append(f"{len(runs)} run spans, expected {a.runs}")
    if not runs:
        errors.append("no run span")
    for r in runs:
        inside = [o for o in ops if (o["pid"], o["tid"]) == (r["pid"], r["tid"])
                  and r["_t0"] <= o["_t0"] and o["_t1"] <= r["_t1"]]
        idx = sorted(o["args"]["index"] for o in inside)
        if idx != list(range(a.ops)):
            errors.append(f"run {r['args'].get('run')}: {len(inside)} op spans, expected one "
                          f"per node (indices 0..{a.ops - 1})")
    if ops and len(ops) != a.ops * max(len(runs), 1):
        errors.append(f"{len(ops)} op spans in all, expected {a.ops} per run")

    n_jobs = 0
    if a.npu:
        submit = {e["args"]["job"]: e for e in events
                  if e.get("cat") == "npu_submit" and e.get("ph") == "i"}
        engine = {e["args"]["job"]: e for e in spans if e.get("cat") == "npu_job"}
        signal = {e["args"]["job"]: e for e in events
                  if e.get("cat") == "npu_signal" and e.get("ph") == "i"}
        n_jobs = len(engine)
        if not engine:
            errors.append("no NPU job spans")
        for job, eng in sorted(engine.items()):
            s = submit.get(job)
            if s is None:
                errors.append(f"job {job}: no submit event")
                continue
            ts = decimal.Decimal(s["ts"])
            order = [("submit", ts), ("start", eng["_t0"]), ("end", eng["_t1"])]
            if signal or a.signal:
                if job not in signal:
                    errors.append(f"job {job}: no signal event")
                else:
                    order.append(("signal", decimal.Decimal(signal[job]["ts"])))
            for (n0, t0), (n1, t1) in zip(order, order[1:]):
                if t1 < t0:
                    errors.append(f"job {job}: {n1} at {t1} us before {n0} at {t0} us")
            owner = [o for o in ops if (o["pid"], o["tid"]) == (s["pid"], s["tid"])
                     and o["_t0"] <= ts <= o["_t1"]]
            if len(owner) != 1:
                errors.append(f"job {job}: submitted inside {len(owner)} op spans, expected 1")
                continue
            o = owner[0]
            if o["args"].get("backend") != "npu":
                errors.append(f"job {job}: submitted by {o['name']} on {o['args'].get('backend')}")
            if not (o["_t0"] <= eng["_t0"] and eng["_t1"] <= o["_t1"]):
                errors.append(f"job {job}: engine span [{eng['_t0']}, {eng['_t1']}] not inside "
                              f"its op {o['name']} [{o['_t0']}, {o['_t1']}]")
        starts = {e["id"] for e in events if e.get("ph") == "s"}
        finishes = {e["id"] for e in events if e.get("ph") == "f"}
        if starts != finishes:
            errors.append(f"flow arrows without both ends: {sorted(starts ^ finishes)[:5]}")

    for e in errors[:40]:
        print(f"error: {e}")
    if errors:
        return 1
    print(f"ok: {len(runs)} runs, {len(ops)} op spans, {n_jobs} NPU jobs, {len(tracks)} tracks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
