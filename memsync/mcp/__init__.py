"""The MCP edge: the one package that imports the MCP SDK.

    server.py   the server on stdio; http.py the same over Streamable HTTP
    tools.py    the tools a model sees and the library calls behind them
    replies.py  results and failures as tool results; text.py, words.py what a model reads
    live.py     keeping a server's view of the vault current
"""
