"""fmsim from Python: the fmsim commands as functions returning plain dicts and lists.

Every function takes the same arguments as the command line, as keyword arguments
(``seq=8192`` is ``--seq 8192``, ``tp_overlap=True`` is ``--tp-overlap``, a list is joined with
commas), and returns what ``--json`` prints, parsed: the shapes are the CLI's JSON documents
(documented in docs/python.md; ``API_VERSION`` changes when one changes incompatibly). A job can
also be given as a job file path or a dict, ``job=...``. ``help(fmsim.train)`` lists a command's
keywords with their defaults and meaning. A keyword the command does not have raises
``TypeError``, as for any Python function; bad values raise ``fmsim.InputError`` with the CLI's
message (the flag or file and line, the field and what is allowed).

    >>> import fmsim
    >>> r = fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:4", tp=8, gbs=64)
    >>> round(r["step_time_s"], 3) > 0
    True
    >>> rows = fmsim.collective(cluster="p5.48xlarge:2", op="all_reduce")["rows"]
    >>> df = fmsim.to_pandas(rows)   # needs pandas

The commands run inside this process (fmsim._core), one at a time.
"""

from __future__ import annotations

import difflib
import inspect
import json
import keyword
import os
import tempfile
from typing import Any, Iterable, Mapping

from . import _core

__all__ = [
    "API_VERSION",
    "FmsimError",
    "InputError",
    "InternalError",
    "FUNCTIONS",
    "catalog",
    "checkpoint",
    "cli",
    "cluster",
    "collective",
    "command",
    "commands",
    "compare",
    "goodput",
    "metrics",
    "models",
    "plan",
    "plan_serve",
    "rl",
    "run_job",
    "serve",
    "sweep",
    "to_pandas",
    "topology",
    "train",
    "validate",
]

#: Version of the returned shapes: bumped when a key is removed or changes meaning.
API_VERSION = 1


class FmsimError(Exception):
    """An fmsim command failed; ``status`` is the CLI's exit status, ``args[0]`` its message."""

    def __init__(self, message: str, status: int, command: list[str]):
        super().__init__(message)
        self.status = status
        self.command = command


class InputError(FmsimError, ValueError):
    """Bad input (the CLI's exit status 2): the message names the flag or file, the field and
    what is allowed, exactly as ``fmsim`` prints it after ``fmsim: error:``."""


class InternalError(FmsimError, RuntimeError):
    """A bug in fmsim (the CLI's exit status 70)."""


def cli(args: Iterable[str]) -> tuple[int, str, str]:
    """Run ``fmsim ARGS...`` in this process; returns (exit status, stdout, stderr)."""
    words = [str(a) for a in args]
    status, out, err = _core.run(words)
    return status, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _flag_words(kwargs: Mapping[str, Any]) -> list[str]:
    words: list[str] = []
    for key, value in kwargs.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            words.append(flag)
        elif isinstance(value, (list, tuple)):
            words += [flag, ",".join(str(v) for v in value)]
        else:
            words += [flag, str(value)]
    return words


def _message(err: str) -> str:
    lines = [line for line in err.splitlines() if line and not line.startswith("Run with --help")]
    text = "\n".join(lines)
    for prefix in ("fmsim: error: ", "fmsim: "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


_FLAGS: dict[tuple[str, ...], Any] = {}


def _flags_of(words: tuple[str, ...]) -> Any:
    """The flags of ``fmsim WORDS...`` (the C++ parser's own list), or None when WORDS name no command."""
    if words not in _FLAGS:
        describe = getattr(_core, "flags", None)
        _FLAGS[words] = json.loads(describe(list(words))) if describe else None
    return _FLAGS[words]


def _keyword(flag: str) -> str:
    return flag[2:].replace("-", "_")


def _check_keywords(words: list[str], kwargs: Mapping[str, Any]) -> None:
    """TypeError, as Python raises it, for a keyword that is no flag of the command WORDS name (its
    longest prefix that names a command: ``catalog show NAME`` is ``catalog show``)."""
    flags = None
    form = [w for w in words if w.startswith("-")]
    names = [w for w in words if not w.startswith("-")]
    for end in range(len(names), 0, -1):
        flags = _flags_of(tuple(names[:end] + form))
        if flags is not None:
            break
    if not flags:
        return
    known = {_keyword(n) for f in flags for n in f["names"]}
    for key in kwargs:
        if key.replace("-", "_") in known:
            continue
        close = difflib.get_close_matches(key, sorted(known), n=3, cutoff=0.6)
        hint = "; did you mean " + " or ".join(repr(c) for c in close) + "?" if close else ""
        function = _FUNCTION_OF.get(names[0], names[0].replace("-", "_"))
        raise TypeError(f"{function}() got an unexpected keyword argument {key!r}{hint}")


def command(name: str, *positional: str, json_output: bool = True, catalog_files: Iterable[str] = (),
            **kwargs: Any) -> Any:
    """Run one fmsim command (``name`` may hold a subcommand: ``"validate training"``) with
    positional words and keyword flags; returns its parsed ``--json`` output.

    ``job=`` takes a job file path or a dict (written to a temporary YAML file for ``--job``).
    ``catalog_files=`` adds ``--catalog FILE`` before the command (extra GPUs, systems, fabrics).
    """
    words: list[str] = []
    for f in catalog_files:
        words += ["--catalog", str(f)]
    words += name.split() + [str(p) for p in positional]
    form = ["--rl"] if name == "plan" and kwargs.get("rl") else []  # `plan --rl` is the RL planner's flags
    _check_keywords(name.split() + [str(p) for p in positional] + form, kwargs)
    job = kwargs.pop("job", None)
    job_path = None
    try:
        if isinstance(job, Mapping):
            handle, job_path = tempfile.mkstemp(prefix="fmsim_job_", suffix=".yaml")
            with os.fdopen(handle, "w") as f:
                json.dump(dict(job), f)  # JSON is YAML
            kwargs["job"] = job_path
        elif job is not None:
            kwargs["job"] = os.fspath(job)
        words += _flag_words(kwargs)
        if json_output:
            words.append("--json")
        status, out, err = cli(words)
    finally:
        if job_path is not None:
            os.unlink(job_path)
    if status == 2:
        raise InputError(_message(err), status, words)
    if status not in (0, 1):
        raise (InternalError if status == 70 else FmsimError)(_message(err) or f"fmsim exited with {status}",
                                                              status, words)
    if not json_output:
        return out
    try:
        return json.loads(out)
    except json.JSONDecodeError as e:
        raise FmsimError(f"fmsim {name} printed no JSON ({e}): {out[:200]!r}", status, words) from None


def commands() -> list[str]:
    """The commands this build of fmsim has (``train``, ``plan``, ...)."""
    _, out, _ = cli(["--help"])
    names, in_list = [], False
    for line in out.splitlines():
        if line.strip().upper().startswith("SUBCOMMANDS"):
            in_list = True
            continue
        if in_list:
            if not line.startswith("  "):
                break
            names.append(line.split()[0])
    return names


def train(**kwargs: Any) -> dict:
    """``fmsim train``: step time, throughput, MFU and memory of one training job."""
    return command("train", **kwargs)


def plan(**kwargs: Any) -> dict:
    """``fmsim plan``: the best layouts and systems for a model and a GPU budget."""
    return command("plan", **kwargs)


def serve(**kwargs: Any) -> dict:
    """``fmsim serve``: inference serving predictions (where this build has the command)."""
    if "serve" not in commands():
        raise InputError("this build of fmsim has no 'serve' command; available: " + ", ".join(commands()), 2,
                         ["serve"])
    return command("serve", **kwargs)


def collective(**kwargs: Any) -> dict:
    """``fmsim collective``: nccl-tests-style rows of predicted collective times over sizes."""
    return command("collective", **kwargs)


def checkpoint(**kwargs: Any) -> dict:
    """``fmsim checkpoint``: checkpoint size, save/load times and the best interval."""
    return command("checkpoint", **kwargs)


def goodput(**kwargs: Any) -> dict:
    """``fmsim goodput``: failures, restarts and goodput of a long job (Monte Carlo)."""
    return command("goodput", **kwargs)


def run_job(**kwargs: Any) -> dict:
    """``fmsim run``: a training job end to end (step time, checkpoints, failures, cost)."""
    return command("run", **kwargs)


def plan_serve(**kwargs: Any) -> dict:
    """``fmsim plan-serve``: the cheapest serving deployments that meet the latency targets."""
    return command("plan-serve", **kwargs)


def rl(**kwargs: Any) -> dict:
    """``fmsim rl``: one RL (GRPO/PPO) step: rollout, training and weight sync; ``plan=True`` searches."""
    return command("rl", **kwargs)


def cluster(**kwargs: Any) -> dict:
    """``fmsim cluster``: a Slurm-scheduled cluster over a job trace: queues, waits, utilisation, goodput."""
    return command("cluster", **kwargs)


def topology(kind: str = "slurm", **kwargs: Any) -> dict:
    """``fmsim topology KIND`` (``slurm`` or ``k8s``): the network topology as scheduler configuration."""
    return command("topology " + kind, **kwargs)


def sweep(grid: str | os.PathLike, **kwargs: Any) -> dict:
    """``fmsim sweep GRID``: run a grid of points (local workers, or ``slurm=True``); the summary,
    with the paths of ``results.csv`` and ``results.jsonl``."""
    return command("sweep", os.fspath(grid), **kwargs)


def metrics(action: str, directory: str | os.PathLike, **kwargs: Any) -> Any:
    """``fmsim metrics ACTION DIR`` (``load``, ``report``): a run's metric series, as Prometheus
    blocks or an HTML report."""
    return command("metrics " + action, os.fspath(directory), **kwargs)


def compare(**kwargs: Any) -> dict:
    """``fmsim compare``: a real run's Prometheus series against the prediction."""
    return command("compare", **kwargs)


def validate(what: str, **kwargs: Any) -> dict:
    """``fmsim validate WHAT`` (``training``, ``collectives``): predictions vs published data."""
    return command("validate " + what, **kwargs)


def catalog(what: str = "systems", *names: str, **kwargs: Any) -> Any:
    """``fmsim catalog WHAT``: ``gpus``, ``systems``, ``fabrics``, ``storage`` (lists of dicts),
    ``show NAME`` or ``cluster SYSTEM:COUNT``."""
    return command("catalog", what, *names, **kwargs)


def models(*words: str, **kwargs: Any) -> Any:
    """``fmsim models``: the model presets (a list of dicts); ``models("show", NAME)`` for one."""
    return command("models", *words, **kwargs)


#: The function for each command that prints ``--json`` (the test checks that every such command
#: of the build has one). ``command()`` runs any of them by name too.
FUNCTIONS = {
    "catalog": catalog,
    "checkpoint": checkpoint,
    "cluster": cluster,
    "collective": collective,
    "compare": compare,
    "goodput": goodput,
    "metrics": metrics,
    "models": models,
    "plan": plan,
    "plan-serve": plan_serve,
    "rl": rl,
    "run": run_job,
    "serve": serve,
    "sweep": sweep,
    "topology": topology,
    "train": train,
    "validate": validate,
}


#: The Python function of each command whose name is not a Python name.
_FUNCTION_OF = {"run": "run_job", "plan-serve": "plan_serve"}

_PYTHON_TYPES = {"INT": int, "UINT": int, "FLOAT": float}


def _default(flag: Mapping[str, Any]) -> Any:
    """A flag's default as a Python value: False for an on/off flag, None where it has none."""
    if not flag["takes_value"]:
        return False
    text = flag["default"]
    if text == "":
        return None
    convert = _PYTHON_TYPES.get(flag["type"], str)
    try:
        return convert(text)
    except ValueError:
        return text


def _annotation(flag: Mapping[str, Any]) -> Any:
    if not flag["takes_value"]:
        return bool
    kind = _PYTHON_TYPES.get(flag["type"], str)
    return f"{kind.__name__} | list" if flag["many"] else kind


def _document(function: Any, words: tuple[str, ...]) -> None:
    """Gives FUNCTION the signature and help of the command WORDS name: each keyword with its type,
    default and the flag's help text, from the C++ parser's own list (so they cannot drift)."""
    try:
        flags = _flags_of(words)
    except Exception:  # an extension without the list: keep the short help
        return
    if not flags:
        return
    parameters = []
    lines = [(function.__doc__ or "").rstrip(), "",
             f"Keyword arguments (``fmsim {' '.join(words)} --help``; ``name_x=v`` is ``--name-x v``, ``True`` "
             "an on/off flag, a list is comma-joined):", ""]
    for flag in flags:
        name = _keyword(flag["name"])
        if not name.isidentifier() or keyword.iskeyword(name) or name == "json":  # json: always given
            continue
        default = _default(flag)
        annotation = "str | os.PathLike | dict" if name == "job" else _annotation(flag)
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                            annotation=annotation))
        shown = annotation if isinstance(annotation, str) else annotation.__name__
        lines.append(f"    {name}: {shown} = {default!r}")
        help_text = " ".join(flag["help"].split())
        if help_text:
            lines.append(f"        {help_text}")
    function.__signature__ = inspect.Signature(parameters, return_annotation=dict)
    function.__doc__ = "\n".join(lines) + "\n"


for _function, _words in ((train, ("train",)), (plan, ("plan",)), (serve, ("serve",)),
                          (collective, ("collective",)), (checkpoint, ("checkpoint",)), (goodput, ("goodput",)),
                          (run_job, ("run",)), (plan_serve, ("plan-serve",)), (rl, ("rl",)),
                          (cluster, ("cluster",)), (compare, ("compare",))):
    _document(_function, _words)
del _function, _words


def _table(result: Any) -> list:
    if isinstance(result, list):
        return result
    if isinstance(result, Mapping):
        for key in ("rows", "results", "layouts", "candidates"):
            if isinstance(result.get(key), list):
                return result[key]
        for value in result.values():
            if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
                return value
        return [result]
    raise TypeError(f"cannot make a table of {type(result).__name__}")


def to_pandas(result: Any):
    """A pandas DataFrame of a result's table: a list of dicts as is, a dict's ``rows`` (or its
    first list of dicts), or one dict as one row. Nested dicts become dotted columns."""
    try:
        import pandas
    except ImportError:
        raise ImportError("fmsim.to_pandas needs pandas (Debian: apt-get install python3-pandas)") from None
    return pandas.json_normalize(_table(result))
