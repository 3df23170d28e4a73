"""Process exit codes of every `desklens` command and of the self-test (core-level: the
self-test and the CLI both use them, and the core must not import the CLI)."""

OK = 0
FAILED = 1  # something went wrong that is neither the input's nor the model's fault
USAGE = 2
MODEL_PROBLEM = 3
INPUT_PROBLEM = 4  # an input that cannot be read, or an output that cannot be written
INTERRUPTED = 130  # Ctrl+C (128 + SIGINT)
PIPE_CLOSED = 141  # stdout's reader left (`| head`): as a shell reports a SIGPIPE death
TERMINATED = 143  # SIGTERM (128 + SIGTERM), after saying what was finished
