"""`[tool.gradguard.verify]`: how `gradguard verify` runs the user's code.

```toml
[tool.gradguard.verify]
device = "auto"        # auto | cpu | cuda
timeout = 120          # seconds of wall time per file
memory = 8192          # MiB of data the run may allocate

[tool.gradguard.verify.targets.Block]   # how to build the module class `Block`
args = [64]
kwargs = { bias = false }
inputs = [[4, 64], "4,64:bool"]  # forward's random inputs: shapes, or "SHAPE:DTYPE" (else inferred)
factory = "make_block" # or: a function of the file returning the module, or (module, inputs)
```
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from gradguard.config import ConfigError, find_config, load_toml, tool_table

DEVICES = ("auto", "cpu", "cuda")
DTYPES = {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
          "float16": "float16", "half": "float16", "bfloat16": "bfloat16", "int64": "int64", "long": "int64",
          "int32": "int32", "int": "int32", "bool": "bool"}  # as --input names them: torch's attribute
_TARGET_KEYS = {"args", "kwargs", "inputs", "factory"}


@dataclass(frozen=True)
class VerifySettings:
    """The device, limits and per-target construction settings of a verification run."""

    device: str = "auto"
    timeout: float = 120.0
    memory: int = 8192
    targets: dict[str, dict] = field(default_factory=dict, hash=False)


def verify_settings_from_table(table: dict) -> VerifySettings:
    """Check and read a `[tool.gradguard.verify]` table (or the same keys from an editor)."""
    unknown = set(table) - {"device", "timeout", "memory", "targets"}
    if unknown:
        raise ConfigError(f"unknown [tool.gradguard.verify] keys: {', '.join(sorted(unknown))}")
    device = table.get("device", "auto")
    if device not in DEVICES:
        raise ConfigError(f"[tool.gradguard.verify] device must be one of {', '.join(DEVICES)}")
    timeout, memory = table.get("timeout", 120.0), table.get("memory", 8192)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not (math.isfinite(timeout) and timeout > 0):
        raise ConfigError("[tool.gradguard.verify] timeout must be a positive, finite number of seconds")
    if isinstance(memory, bool) or not isinstance(memory, int) or memory <= 0:
        raise ConfigError("[tool.gradguard.verify] memory must be a positive number of MiB")
    targets = table.get("targets", {})
    if not isinstance(targets, dict) or not all(isinstance(t, dict) for t in targets.values()):
        raise ConfigError("[tool.gradguard.verify.targets] must hold one table per target")
    checked = {}
    for name, target in targets.items():
        if set(target) - _TARGET_KEYS:
            raise ConfigError(f"[tool.gradguard.verify.targets.{name}] knows only {', '.join(sorted(_TARGET_KEYS))}")
        if "inputs" in target:
            inputs = target["inputs"]
            if not isinstance(inputs, list):
                raise ConfigError(f"[tool.gradguard.verify.targets.{name}] inputs must be a list of shapes")
            try:
                target = {**target, "inputs": [input_spec(i) for i in inputs]}
            except ValueError as error:
                raise ConfigError(f"[tool.gradguard.verify.targets.{name}] inputs: {error}") from None
        checked[name] = target
    return VerifySettings(device, float(timeout), memory, checked)


def input_spec(value: object) -> dict:
    """One random input of forward: a shape (`[2, 64]`) or `"2,64"`, `"2,64:bool"`, as
    {"shape": [2, 64], "dtype": "bool"}. Raises ValueError for anything else."""
    if isinstance(value, list) and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value):
        return {"shape": list(value), "dtype": "float32"}
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is neither a shape nor \"SHAPE:DTYPE\"")
    shape, _, dtype = value.strip().partition(":")
    dtype = DTYPES.get(dtype.strip() or "float32")
    try:
        dims = [int(n) for n in shape.replace("x", ",").split(",") if n.strip()] if shape.strip() else []
    except ValueError:
        dims = [-1]
    if dtype is None or any(n < 0 for n in dims):
        raise ValueError(f"{value!r} is not SHAPE[:DTYPE], such as 2,64 or 2,64:bool "
                         f"(dtypes: {', '.join(DTYPES)})")
    return {"shape": dims, "dtype": dtype}


def load_verify_settings(path: Path) -> VerifySettings:
    """The settings of the closest pyproject.toml above `path` with a `[tool.gradguard]` table
    (the defaults without one)."""
    pyproject = find_config(path)
    if pyproject is None:
        return VerifySettings()
    verify = (tool_table(load_toml(pyproject), pyproject) or {}).get("verify", {})
    try:
        if not isinstance(verify, dict):
            raise ConfigError("[tool.gradguard.verify] must be a table")
        return verify_settings_from_table(verify)
    except ConfigError as error:
        raise ConfigError(f"{pyproject}: {error}") from error
