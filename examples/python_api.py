#!/usr/bin/env python3
"""fmsim from Python, notebook style: run it cell by cell, or as a script
(PYTHONPATH=build/python python3 examples/python_api.py after `make`)."""

import fmsim

# %% One training step: the same arguments as `fmsim train`, the --json document back.
step = fmsim.train(model="llama3.1-70b", cluster="p5.48xlarge:64", tp=8, pp=4, gbs=512, seq=8192)
print(f"Llama 3.1 70B on 512 H100: step time {step['step_time_s']:.2f} s, MFU {step['mfu']:.1%}")

# %% A small design-space study in a loop: tensor parallelism x sequence length.
rows = []
for tp in (2, 4, 8):
    for seq in (4096, 8192):
        r = fmsim.train(model="llama3.1-8b", cluster="p5en.48xlarge:4", tp=tp, seq=seq, gbs=256)
        rows.append({"tp": tp, "seq": seq, "step_s": r["step_time_s"], "mfu": r["mfu"], "fits": r["fits_memory"]})
for row in sorted(rows, key=lambda row: row["step_s"]):
    print(f"  tp {row['tp']}  seq {row['seq']:5d}  step {row['step_s']:.3f} s  MFU {row['mfu']:.1%}")

# %% A job given as a dict (the job file's YAML keys), with a flag on top.
job = {"model": "llama3.1-8b", "cluster": "p5.48xlarge:8", "parallelism": {"tp": 8}, "batch": {"global": 512}}
print("job dict, 1024 sequences:", round(fmsim.train(job=job, gbs=1024)["step_time_s"], 3), "s")

# %% The planner, and a collective sweep as a table.
best = fmsim.plan(model="llama3.1-8b", gpus=64, systems=["p5.48xlarge", "p5en.48xlarge"], threads=2)["best"]
print("best layout:", best["system"], best["label"], f"{best['step_time_s']:.2f} s")
sweep = fmsim.collective(cluster="p5.48xlarge:2", op="all_reduce", min_bytes="1M", max_bytes="1G")
try:
    print(fmsim.to_pandas(sweep)[["bytes", "time_us", "busbw_GBps"]].tail(3).to_string(index=False))
except ImportError as e:  # pandas is optional
    print(f"({e}); last row: {sweep['rows'][-1]['bytes']} B at {sweep['rows'][-1]['busbw_GBps']:.1f} GB/s")

# %% Bad input raises fmsim.InputError with the CLI's message.
try:
    fmsim.collective(cluster="p5.48xlarge:2", max_bytes="1e30")
except fmsim.InputError as e:
    print("InputError:", e)
