"""Worker QObjects, each owning one resource on its own QThread (the VLM engine, the OCR,
every write, file intake, a model-setup child process, the local API server), and the
controllers the GUI thread talks to them through (threads.py: the shared plumbing)."""
