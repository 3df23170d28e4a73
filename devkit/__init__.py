"""Tools for developing DeskLens, shared by the tests and the benchmarks by one stable path
(`devkit.*`, with the repository root on sys.path): the random Qwen3-VL checkpoint factory and
the converter run as users run it. Not part of the installed app (needs the `convert` extra)."""
