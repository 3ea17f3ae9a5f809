"""`gradguard verify` could not run the file, or the run did not finish.

## What it means
The run was not done or was stopped: no torch in the project's interpreter, no CUDA for
`--device cuda`, no such `--target`, inputs that cannot be inferred, a constructor that needs
arguments that were not given, past its time limit (`--timeout`, `timeout`) or its memory limit
(`memory` in `[tool.gradguard.verify]`), a crash or a signal. The finding sits at line 1 of the
file and says why; stderr says it too, and the exit code is 2. The static findings of the file
still stand; what the run saw before it stopped still counts.

## Why does it matter?
Nothing, or only part, of the file was verified: no finding of the run is no evidence that the
code is safe.

## What to do
Do what the message says: name the project's interpreter (`--python .venv/bin/python`), install
torch there, name an existing target, give its inputs (`--input SHAPE[:DTYPE]`) or its
constructor's arguments, or raise the limit that stopped it. See docs/verify.md.
"""

CODE = "GV002"
NAME = "run-incomplete"
