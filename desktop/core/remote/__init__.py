"""A model server as the engine: any OpenAI-compatible endpoint (OpenVINO Model Server, another
DeskLens's `serve --api`, …) behind the same `AnswerEngine` protocol as the local engine.

Off unless the user configures a server; the OCR always stays on this computer. Import the
submodules (`config` is light: the CLI reads it before it knows whether a server is used;
`engine` brings the HTTP client).
"""
