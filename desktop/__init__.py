"""DeskLens: ask questions about images and extract their text, offline, on OpenVINO."""

__version__ = "0.1.0"
APP_NAME = "DeskLens"
