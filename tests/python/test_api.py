"""The Python API (import fmsim) against the fmsim executable: same arguments, same --json
documents, same error messages. Run by ctest (python_api) with PYTHONPATH at build/python and
FMSIM_BINARY / FMSIM_SOURCE_DIR from CMake; writes only into its own temporary directory."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import fmsim

BINARY = os.environ["FMSIM_BINARY"]
SOURCE = os.environ["FMSIM_SOURCE_DIR"]


def cli_json(*args):
    """What the executable prints for ARGS --json, parsed."""
    r = subprocess.run([BINARY, *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def cli_error(*args):
    """The executable's exit status and its error message (after 'fmsim: error: ')."""
    r = subprocess.run([BINARY, *args], capture_output=True, text=True)
    first = r.stderr.splitlines()[0]
    return r.returncode, first[len("fmsim: error: "):]


class SameAsTheCommandLine(unittest.TestCase):
    def test_train_keywords_return_the_cli_json(self):
        # tp=8 is --tp 8, seq is --seq; the dict is exactly `fmsim train ... --json`.
        got = fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:4", tp=8, gbs=64, seq=4096)
        want = cli_json("train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:4", "--tp", "8", "--gbs", "64",
                        "--seq", "4096")
        self.assertEqual(got, want)
        self.assertGreater(got["step_time_s"], 0)
        self.assertEqual(got["layout"]["tp"], 8)
        self.assertEqual(got["layout"]["dp"], 4)  # 32 GPUs / tp 8

    def test_boolean_and_list_keywords(self):
        # tp_overlap=True is the flag --tp-overlap; a list is comma-joined (--systems a,b).
        self.assertEqual(fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:2", tp=8, tp_overlap=True),
                         cli_json("train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "8",
                                  "--tp-overlap"))
        got = fmsim.plan(model="llama3.1-8b", gpus=32, systems=["p5.48xlarge", "p5en.48xlarge"], threads=2, top=2)
        self.assertIsNotNone(got["best"])
        self.assertIn(got["best"]["system"], ("p5.48xlarge", "p5en.48xlarge"))

    def test_job_file_job_dict_and_keywords_agree(self):
        path = os.path.join(SOURCE, "examples", "llama70b_job.yaml")
        from_file = fmsim.train(job=path)
        # The same job as examples/llama70b_job.yaml, as a dict.
        job = {"kind": "TrainingJob", "model": "llama3.1-70b", "cluster": "p5.48xlarge:64", "seq_len": 8192,
               "precision": "fp8", "recompute": "selective", "stack": "megatron",
               "parallelism": {"tp": 8, "pp": 4, "vp": 5, "sharding": "zero1", "tp_overlap": True},
               "batch": {"global": 512, "micro": 1}}
        self.assertEqual(fmsim.train(job=job), from_file)
        # Flags override the job's values, as on the command line.
        self.assertEqual(fmsim.train(job=job, gbs=1024)["layout"]["global_batch"], 1024)
        self.assertEqual(from_file, cli_json("train", "--job", path))

    def test_collective_catalog_models(self):
        rows = fmsim.collective(cluster="p5.48xlarge:2", op="all_gather", min_bytes="1M", max_bytes="1G")["rows"]
        self.assertEqual(len(rows), 11)  # 2^20 .. 2^30
        self.assertEqual(rows[0]["bytes"], 1 << 20)
        systems = {s["name"] for s in fmsim.catalog("systems")}
        self.assertIn("p5.48xlarge", systems)
        self.assertIn("p6-b200.48xlarge", systems)
        self.assertIn("llama3.1-8b", {m["name"] for m in fmsim.models()})
        self.assertEqual(fmsim.models("show", "llama3.1-8b"), cli_json("models", "show", "llama3.1-8b"))

    def test_extra_catalog_file(self):
        custom = os.path.join(SOURCE, "examples", "custom_catalog.yaml")
        got = fmsim.catalog("systems", catalog_files=[custom])
        self.assertEqual(got, cli_json("--catalog", custom, "catalog", "systems"))


class ErrorsCarryTheCliMessage(unittest.TestCase):
    def assert_same_error(self, call, *cli_args):
        status, message = cli_error(*cli_args)
        self.assertEqual(status, 2)
        with self.assertRaises(fmsim.InputError) as caught:
            call()
        self.assertEqual(str(caught.exception), message)
        self.assertEqual(caught.exception.status, 2)
        self.assertIsInstance(caught.exception, ValueError)

    def test_bad_values(self):
        self.assert_same_error(lambda: fmsim.collective(cluster="p5.48xlarge:2", max_bytes="1e30"),
                               "collective", "--cluster", "p5.48xlarge:2", "--max-bytes", "1e30")
        self.assert_same_error(lambda: fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:2", seq=2147483647),
                               "train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--seq", "2147483647")
        self.assert_same_error(lambda: fmsim.train(model="no-such-model", cluster="p5.48xlarge:2"),
                               "train", "--model", "no-such-model", "--cluster", "p5.48xlarge:2")

    def test_unknown_keyword_is_an_unknown_flag(self):
        with self.assertRaises(fmsim.InputError) as caught:
            fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:2", tensor_parallel=8)
        self.assertIn("--tensor-parallel", str(caught.exception))

    def test_bad_job_dict_names_the_field(self):
        with self.assertRaises(fmsim.InputError) as caught:
            fmsim.train(job={"model": "llama3.1-8b", "cluster": "p5.48xlarge:2", "batch": {"global": -4}})
        self.assertIn("batch.global", str(caught.exception))

    def test_serve(self):
        if "serve" not in fmsim.commands():
            with self.assertRaises(fmsim.InputError) as caught:
                fmsim.serve(model="llama3.1-8b")
            self.assertIn("no 'serve' command", str(caught.exception))
            return
        got = fmsim.serve(model="llama3.1-8b", cluster="p5en.48xlarge", tp=1, isl=512, osl=128, num_requests=64)
        self.assertEqual(got, cli_json("serve", "--model", "llama3.1-8b", "--cluster", "p5en.48xlarge", "--tp", "1",
                                       "--isl", "512", "--osl", "128", "--num-requests", "64"))

    def test_the_process_survives_many_errors(self):
        # In-process: a failing command must leave the interpreter and std::cout usable.
        for _ in range(50):
            with self.assertRaises(fmsim.InputError):
                fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:0")
        self.assertGreater(fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:1")["step_time_s"], 0)


class Tables(unittest.TestCase):
    def test_to_pandas(self):
        result = fmsim.collective(cluster="p5.48xlarge:2", min_bytes="1K", max_bytes="1M")
        try:
            import pandas  # noqa: F401
        except ImportError:
            with self.assertRaisesRegex(ImportError, "python3-pandas"):
                fmsim.to_pandas(result)
            self.assertEqual(len(fmsim._table(result)), 11)  # the rows the frame would hold
            return
        frame = fmsim.to_pandas(result)
        self.assertEqual(len(frame), 11)  # 2^10 .. 2^20
        self.assertIn("busbw_GBps", frame.columns)


class Example(unittest.TestCase):
    def test_example_script_runs(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run([sys.executable, os.path.join(SOURCE, "examples", "python_api.py")], cwd=tmp,
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("step time", r.stdout)


if __name__ == "__main__":
    unittest.main()
