"""PySide6 desktop app over the Qt-free core.

Threads: the GUI thread only draws and routes; `worker.EngineWorker` owns the VLM on its own
QThread and `ocr_worker.OcrWorker` the fast OCR on another; image intake runs in the global
QThreadPool. Requests travel by queued signals, results come back by signals.
"""
