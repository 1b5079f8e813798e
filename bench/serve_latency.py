#!/usr/bin/env python3
"""Live-page latency: POST /api/runs to the run's results in hand, as the page does it (docs/serve.md).

Starts `npusim serve --port 0`, then for each workload runs six array sizes one after another
(the page's slider) and prints each time and the median, beside the time of `gzip -6` on 8 MB of
random bytes measured in the same run, a yardstick of the machine's speed that makes figures
from different machines comparable (docs/performance.md).

Usage: bench/serve_latency.py [build/npusim]   (needs a build; only the standard library)
"""
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "build", "npusim")


def gzip_seconds() -> float:
    data = os.urandom(8 << 20)
    start = time.perf_counter()
    subprocess.run(["gzip", "-6"], input=data, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def run_until_done(port: int, body: dict) -> float:
    """One run as the page asks for it: the POST's answer is the run's events, the last but one
    its results (summary.json and roofline.json), the last its final state."""
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("POST", "/api/runs", json.dumps(body),
                 {"Content-Type": "application/json", "Accept": "text/event-stream"})
    r = conn.getresponse()
    stream = r.read().decode()  # the server closes the stream after the final state
    conn.close()
    assert r.status == 200, (r.status, stream)
    events = [block for block in stream.split("\n\n") if block.startswith("event: ")]
    final = json.loads(events[-1].split("data: ", 1)[1])
    assert final["status"] == "done", final
    result = json.loads(events[-2].split("data: ", 1)[1])
    assert events[-2].startswith("event: result") and "summary" in result and "roofline" in result
    return time.perf_counter() - start


def main() -> None:
    server = subprocess.Popen([binary, "serve", "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        port = int(re.search(r"http://127\.0\.0\.1:(\d+)", server.stdout.readline()).group(1))
        yardstick = gzip_seconds()
        print(f"gzip -6 of 8 MB random bytes: {yardstick * 1e3:.0f} ms")
        for workload in ("mobilenet_v2", "resnet50"):
            run_until_done(port, {"config": "edge-m", "workload": workload})  # loads the workload once
            times = []
            for rows in (8, 16, 24, 32, 48, 64):
                times.append(run_until_done(port, {"config": "edge-m", "workload": workload, "fusion": "greedy",
                                                   "set": {"npu.mac_array.rows": rows}}))
            print(f"{workload:14s} edge-m greedy, rows 8..64: " + " ".join(f"{t * 1e3:.0f}" for t in times) +
                  f" ms; median {statistics.median(times) * 1e3:.0f} ms"
                  f" = {statistics.median(times) / yardstick:.2f}x gzip")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
