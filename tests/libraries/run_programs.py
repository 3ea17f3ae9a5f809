"""Runs labelled programs one after another in this one process (the libraries are imported once)
and prints, for each, one JSON line: {"file", "error"} where error is the last line of the
exception the program raised, or null when it ran to the end.

torchvision 0.28.0 on PyPI is a CUDA build whose `_C.so` cannot load beside torch's CPU wheel; its
`__init__` still registers fake kernels for `torchvision::nms` and `torchvision::qnms`, so those two
schemas are defined here first (no program calls them). Models are built with random weights and
`HF_HUB_OFFLINE=1` keeps transformers off the network.

usage: run_programs.py FILE...
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import traceback

os.environ["HF_HUB_OFFLINE"] = "1"


def _define_torchvision_schemas() -> object:
    import torch

    library = torch.library.Library("torchvision", "DEF")
    library.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    library.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    return library


def main(files: list[str]) -> None:
    _library = _define_torchvision_schemas()
    for file in files:
        try:
            runpy.run_path(file, run_name="__main__")
            error = None
        except Exception as exc:  # the program's fate is the result
            error = traceback.format_exception_only(exc)[-1].strip()
        print(json.dumps({"file": file, "error": error}), flush=True)
    del _library


if __name__ == "__main__":
    main(sys.argv[1:])
