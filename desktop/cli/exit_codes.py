"""Process exit codes shared by every `desklens` subcommand."""

OK = 0
FAILED = 1
USAGE = 2
MODEL_PROBLEM = 3
INPUT_PROBLEM = 4
INTERRUPTED = 130
