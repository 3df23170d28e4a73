"""Qt-free core: model engine, OCR, image intake, history store, model registry.

Nothing under this package may import Qt; the GUI and the CLI sit on top of it.
"""
