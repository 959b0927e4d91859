#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the device times of `edgert profile --json --trace` on a GPU backend.

    check-device-times.py PROFILE.json TRACE.json BACKEND

The model's every op must run on BACKEND. Checks (docs/cli.md, "Host and
device times"):
  - every op but views planned in place (Reshape, Flatten, Squeeze,
    Unsqueeze, Identity, Dropout: no device command) has clock "device",
    and device_ops counts them;
  - each device time is positive and no longer than the op's host time
    (which holds queueing, submitting and waiting for it);
  - their sum is within a run's wall time (run_ms);
  - the trace has one "device" span per device-timed op and timed run.
Prints one "N of M ops device-timed, ..." line and exits 0, or fails with
an assertion naming the problem.
"""
import json
import sys

VIEWS = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}


def main():
    prof, trace, backend = sys.argv[1:4]
    d = json.load(open(prof))
    ops = [o for o in d["ops"] if o["backend"] == backend]
    dev = [o for o in ops if o["clock"] == "device"]
    assert ops and len(ops) == len(d["ops"]), "not every op on %s" % backend
    assert d["device_ops"] == len(dev), (d["device_ops"], len(dev))
    host = [o["name"] + " " + o["type"] for o in ops
            if o["clock"] != "device" and o["type"] not in VIEWS]
    assert not host, "ops without a device time: %s" % host
    bad = [o["name"] for o in dev if not 0 < o["ms"] <= o["host_ms"]]
    assert not bad, "device times not in (0, host time]: %s" % bad
    total = sum(o["ms"] for o in dev)
    assert total <= d["run_ms"], \
        "device times add up to %.3f ms, over a run's %.3f" % (total, d["run_ms"])
    spans = [e for e in json.load(open(trace))["traceEvents"] if e.get("cat") == "device"]
    assert len(spans) == d["device_ops"] * d["loops"], (len(spans), d["device_ops"], d["loops"])
    print("%d of %d ops device-timed, %.3f ms of a %.3f ms run"
          % (len(dev), len(ops), total, d["run_ms"]))


if __name__ == "__main__":
    main()
