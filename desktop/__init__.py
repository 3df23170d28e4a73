"""DeskLens: ask questions about images and extract their text, offline, on OpenVINO."""

import sys

__version__ = "0.1.0"
APP_NAME = "DeskLens"

# The offline promise: `import openvino` sends a usage event to Google Analytics whenever the
# openvino-telemetry package is installed (conversion tools bring it in). Making it unimportable
# before OpenVINO loads sends OpenVINO to its built-in no-op stub: DeskLens never phones home.
sys.modules.setdefault("openvino_telemetry", None)  # type: ignore[arg-type]  # None: the import fails
