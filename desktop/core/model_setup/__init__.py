"""Getting a model into place: import, download, validate, write the manifest, move in.

Shared by the GUI's first-run panel, `desklens models --download/--import`, the bundle and
convert.py (which adds the export half). Qt-free; huggingface_hub and OpenVINO are imported
only inside the functions that need them, so listing models stays light and offline.
"""
