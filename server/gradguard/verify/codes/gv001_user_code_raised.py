"""The code `gradguard verify` ran raised an exception other than PyTorch's in-place errors.

## What it means
`gradguard verify` runs a script, or builds a module class or calls a function and feeds it
random inputs, in a child process under a tracer. When that code raises anything but the
in-place errors the rules describe (those are reported as GG002 or GG003), the run stops there:
the finding sits on the line of the user's code where it was raised, its related locations are
the calls that led there, and the traceback is printed to stderr (in JSON, in `traceback`).
What the run found before it stopped still counts.

## Why does it matter?
The code after that line was never run, so nothing after it was verified: a saved tensor
changed later would go unseen. The exception may be a real bug, or only the price of running
code out of its context: a shape the random `--input` does not match, a file or a dataset the
script expects, a CUDA device the run did not get.

## What to do
Read the traceback. If the inputs were wrong, give the target its shapes and dtypes
(`--input 2,16,64 --input 2,16,1:bool`, or `inputs` in `[tool.gradguard.verify.targets.NAME]`)
or its constructor's arguments (`args`, `kwargs`); verify a smaller target (`--target Block`)
whose inputs are easy to make; or fix the bug it found. See docs/verify.md.
"""

CODE = "GV001"
NAME = "user-code-raised"
