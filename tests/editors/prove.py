"""Run a corpus case as written and as an editor saved it, in one process (torch loads once).

usage: python prove.py ORIGINAL FIXED

Prints one JSON object, {"original": ERROR, "fixed": ERROR}, where ERROR is null when that
program ran to the end and "Type: message" (plus the traceback, for the fixed one) when it raised.
The caller decides what each should be: the original must fail, the fixed one must not.
"""

import json
import runpy
import sys
import traceback
import warnings


def run(path: str, with_traceback: bool) -> str | None:
    try:
        runpy.run_path(path, run_name="__main__")
    except BaseException as error:  # noqa: BLE001 - a SystemExit or anything else is reported too
        if isinstance(error, SystemExit) and error.code in (None, 0):
            return None
        text = f"{type(error).__name__}: {error}"
        return text + "\n" + traceback.format_exc() if with_traceback else text
    return None


if __name__ == "__main__":
    warnings.simplefilter("ignore")  # torch's warnings (no NumPy, ...) are not the verdict
    original, fixed = sys.argv[1:3]
    print(json.dumps({"original": run(original, False), "fixed": run(fixed, True)}))
