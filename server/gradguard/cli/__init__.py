"""Command-line entry points: `gradguard check` (and later `lsp`, `verify`)."""
