#!/usr/bin/env python3
"""Cost of one npusim.simulate call from Python against the CLI's whole process.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/bench_python.py [config] (default edge-m).
Prints the median of 5 per workload: npusim.plan, npusim.simulate (plan + fork + simulate +
analyse), and `build/npusim run` (process start, simulation and the whole output folder).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import npusim


def median_seconds(fn, repeat=5):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    config = sys.argv[1] if len(sys.argv) > 1 else "edge-m"
    hw = npusim.Config(config)
    binary = os.path.join(os.path.dirname(__file__), "..", "build", "npusim")
    print(f"{'workload':<16}{'plan_s':>10}{'simulate_s':>12}{'cli_run_s':>12}")
    for workload in ("mobilenet_v2", "resnet50"):
        g = npusim.load(workload)
        plan_s = median_seconds(lambda: npusim.plan(g, hw, fusion="greedy"))
        sim_s = median_seconds(lambda: npusim.simulate(g, hw, fusion="greedy"))
        with tempfile.TemporaryDirectory() as out:
            cmd = [binary, "run", "--workload", workload, "--config", config, "--fusion", "greedy", "--out", out]
            cli_s = median_seconds(lambda: subprocess.run(cmd, check=True, capture_output=True))
        print(f"{workload:<16}{plan_s:>10.3f}{sim_s:>12.3f}{cli_s:>12.3f}")


if __name__ == "__main__":
    main()
