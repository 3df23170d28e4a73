"""A local OpenAI-compatible HTTP API over the warm engine and the fast OCR (Qt-free).

`server.ApiServer` binds 127.0.0.1 and ::1 only and runs uvicorn on its own thread;
`routes.build_app` holds the endpoints; `security` the token, Host/Origin and size checks;
`jobs` the queue through which chat requests reach the one thread that owns the model.
"""

DEFAULT_PORT = 8765  # `desklens serve --api` and the app's Settings switch
TOKEN_FILE = "api.token"  # in the data folder, 0600 (tokens.load_or_create_token)
